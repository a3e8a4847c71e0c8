// Package runlog keeps each module's recent runs in memory, with when each
// step of a run began and ended, for the status page's module pages and
// converge timeline. Its memory is bounded: a fixed number of runs per
// module, of steps per run and of bytes per error.
package runlog

import (
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Bounds of what a Log keeps.
const (
	// DefaultRuns is how many finished runs of each module New keeps.
	DefaultRuns = 20
	// maxSpans bounds a run's spans: a run that changes step more often
	// (a module held and released again and again) extends its last one.
	maxSpans = 16
	// maxError bounds the bytes of a run's error kept.
	maxError = 2048
)

// Log records module runs as the run code reports their steps. A nil *Log
// records nothing. Its methods are safe for concurrent use; the Log owns
// its state.
type Log struct {
	clock clock.PassiveClock
	keep  int

	mu   sync.Mutex
	mods map[string]*moduleLog
}

// moduleLog is one module's runs: finished ones oldest first, at most
// keep, and the one in progress.
type moduleLog struct {
	done    []status.Run
	current *status.Run
	// retryAt is the end of the last run when it failed and is retried
	// after a backoff: the next run starts with that wait.
	retryAt time.Time
}

// New returns a Log keeping the last keep (DefaultRuns when 0 or less)
// finished runs of each module.
func New(clk clock.PassiveClock, keep int) *Log {
	if keep <= 0 {
		keep = DefaultRuns
	}
	return &Log{clock: clk, keep: keep, mods: map[string]*moduleLog{}}
}

func (l *Log) module(name string) *moduleLog {
	m := l.mods[name]
	if m == nil {
		m = &moduleLog{}
		l.mods[name] = m
	}
	return m
}

// Held records that the module waits for the modules it requires: its
// next run starts with that wait, from now on.
func (l *Log) Held(module string) { l.openAt(module, status.StepRequirements) }

// open starts a run at now, or at the end of the failed run it retries,
// with the backoff waited since as its first span. Called with mu held.
func (l *Log) open(m *moduleLog, now time.Time) *status.Run {
	r := &status.Run{Start: now, Outcome: status.OutcomeRunning}
	if !m.retryAt.IsZero() {
		r.Start = m.retryAt
		r.Spans = append(r.Spans, status.Span{Step: status.StepBackoff, Start: m.retryAt, End: now})
		m.retryAt = time.Time{}
	}
	return r
}

// Begin records that an attempt of the module started on a worker: its
// hooks run first.
func (l *Log) Begin(module string) { l.openAt(module, status.StepHooks) }

// openAt enters step in the module's run in progress, opening one first
// when none is.
func (l *Log) openAt(module, step string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m, now := l.module(module), l.clock.Now()
	if m.current == nil {
		m.current = l.open(m, now)
	}
	enter(m.current, step, now)
}

// Step records that the module's attempt in progress entered step (one
// of status's Step constants); nothing when no attempt runs.
func (l *Log) Step(module, step string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mods[module]; m != nil && m.current != nil {
		enter(m.current, step, l.clock.Now())
	}
}

// End records the end of the module's attempt with err (nil: it
// succeeded). A failure that is retried (not a queue.TerminalError)
// starts the next run with its backoff.
func (l *Log) End(module string, err error) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m, now := l.module(module), l.clock.Now()
	r := m.current
	if r == nil {
		r = &status.Run{Start: now}
	}
	m.current = nil
	closeLast(r, now)
	r.End, r.Outcome = now, status.OutcomeSucceeded
	if err != nil {
		r.Outcome, r.Error = status.OutcomeFailed, truncate(err.Error())
		if !queue.IsTerminal(err) {
			m.retryAt = now
		}
	}
	m.done = append(m.done, *r)
	if over := len(m.done) - l.keep; over > 0 {
		m.done = slices.Delete(m.done, 0, over)
	}
}

// Forget drops a module's runs in progress and its pending backoff (it
// was disabled); its finished runs stay.
func (l *Log) Forget(module string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mods[module]; m != nil {
		m.current, m.retryAt = nil, time.Time{}
	}
}

// Runs returns the module's kept runs, oldest first, the one in progress
// last (Outcome Running).
func (l *Log) Runs(module string) []status.Run {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.mods[module]
	if m == nil {
		return nil
	}
	return m.snapshot()
}

// All returns every module's runs, by module name.
func (l *Log) All() []status.ModuleRuns {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]status.ModuleRuns, 0, len(l.mods))
	for name, m := range l.mods {
		if runs := m.snapshot(); len(runs) > 0 {
			out = append(out, status.ModuleRuns{Module: name, Runs: runs})
		}
	}
	slices.SortFunc(out, func(a, b status.ModuleRuns) int { return strings.Compare(a.Module, b.Module) })
	return out
}

// snapshot copies the runs, so callers never share the Log's slices.
// Called with mu held.
func (m *moduleLog) snapshot() []status.Run {
	out := make([]status.Run, 0, len(m.done)+1)
	for _, r := range m.done {
		r.Spans = slices.Clone(r.Spans)
		out = append(out, r)
	}
	if m.current != nil {
		r := *m.current
		r.Spans = slices.Clone(r.Spans)
		out = append(out, r)
	}
	return out
}

// enter closes the run's open span and opens one of step at now; a span
// of the same step goes on. Past maxSpans, the last span goes on instead.
func enter(r *status.Run, step string, now time.Time) {
	if n := len(r.Spans); n > 0 && r.Spans[n-1].End.IsZero() && r.Spans[n-1].Step == step {
		return
	}
	if len(r.Spans) >= maxSpans {
		r.Spans[len(r.Spans)-1].End = time.Time{}
		return
	}
	closeLast(r, now)
	r.Spans = append(r.Spans, status.Span{Step: step, Start: now})
}

// closeLast ends the run's open span at now.
func closeLast(r *status.Run, now time.Time) {
	if n := len(r.Spans); n > 0 && r.Spans[n-1].End.IsZero() {
		r.Spans[n-1].End = now
	}
}

func truncate(s string) string {
	if len(s) <= maxError {
		return s
	}
	return strings.ToValidUTF8(s[:maxError], "") + "..."
}
