package bench

import (
	"time"
)

// Log messages the harness reads; they are the operator's, not ours.
const (
	msgDiscovered = "modules discovered"
	msgPlanned    = "modules planned"
	msgConverged  = "first converge done"
	// msgConvergeDone ends every later converge.
	msgConvergeDone = "converge done"
	msgTaskDone     = "task done"
	msgRunDone      = "module run done"
	// The Helm client logs these at debug level with a duration; the
	// operator logs "release deployed" again at info level without one.
	msgDeployed = "release deployed"
	msgUpToDate = "release up to date"
	taskStartup = "Startup"
	// msgListening carries the HTTP listener's address in name.
	msgListening = "http server listening"
)

// Phases split the first converge by the timestamps and durations of the
// operator's debug log lines. Wall-clock phases add up to the total; the
// sums overlap when modules run in parallel.
type Phases struct {
	// Discovery: process start to "modules discovered" (start-up, module
	// discovery on disk).
	Discovery time.Duration
	// Setup: to the start of the Startup task (clients, ConfigMap read).
	Setup time.Duration
	// HookConfig: the Startup task, which runs every hook with --config.
	HookConfig time.Duration
	// Planning: to "modules planned" (global bindings, beforeAll hooks,
	// enabled decisions, listing releases).
	Planning time.Duration
	// ModuleRuns: to "first converge done", wall clock.
	ModuleRuns time.Duration
	// RunSum is the sum of module run durations; HelmSum the part of it
	// spent in Helm (render, compare, install or upgrade); the rest is
	// hooks and kubernetes bindings. HelmPrepSum is the part of HelmSum
	// before Helm's first write to the cluster.
	RunSum, HelmSum, HelmPrepSum time.Duration
	// Runs and Releases count module runs and Helm applies.
	Runs, Releases int
}

// HookSum is the time module runs spent outside Helm: hooks, binding
// start-up and Synchronization, values validation.
func (p Phases) HookSum() time.Duration { return p.RunSum - p.HelmSum }

// Parallelism is how many module runs were in progress on average.
func (p Phases) Parallelism() float64 {
	if p.ModuleRuns <= 0 {
		return 0
	}
	return float64(p.RunSum) / float64(p.ModuleRuns)
}

// marks are the points in time that separate the phases.
type marks struct {
	discovered, startupEnd, planned, converged time.Time
	startup                                    time.Duration
}

// phasesOf computes the phases of the first converge from the log lines of
// an operator started at start.
func phasesOf(start time.Time, lines []Entry) Phases {
	var p Phases
	var h helmSteps
	m := marks{discovered: start, planned: start, converged: start}
	for _, e := range lines {
		if a, ok := h.add(e); ok {
			p.HelmSum += a.total
			p.HelmPrepSum += a.prep
			p.Releases++
		}
		if p.add(&m, e) {
			break
		}
	}
	p.Discovery = m.discovered.Sub(start)
	if !m.startupEnd.IsZero() {
		p.Setup = m.startupEnd.Add(-m.startup).Sub(m.discovered)
		p.HookConfig = m.startup
		p.Planning = m.planned.Sub(m.startupEnd)
	}
	p.ModuleRuns = m.converged.Sub(m.planned)
	return p
}

// add takes one log line into p and m; it reports the end of the first
// converge.
func (p *Phases) add(m *marks, e Entry) bool {
	switch e.Msg() {
	case msgDiscovered:
		m.discovered = e.Time()
	case msgTaskDone:
		if d, ok := e.Duration("duration"); ok && e.Str("task") == taskStartup {
			m.startupEnd, m.startup = e.Time(), d
		}
	case msgPlanned:
		m.planned = e.Time()
	case msgConverged:
		m.converged = e.Time()
		return true
	case msgRunDone:
		d, _ := e.Duration("duration")
		p.RunSum += d
		p.Runs++
	}
	return false
}

// Sample is one measured reaction with the operator's own account of it.
type Sample struct {
	// Total is from the change to the rendered object showing it.
	Total time.Duration
	// Run is the module run that applied it; Helm the part of the run in
	// Helm, HelmPrep the part of that before Helm's first write. Zero when
	// the log lines were not found.
	Run, Helm, HelmPrep time.Duration
	// API are the operator's requests to the API server from just before
	// the change until the run was done, from its /metrics.
	API APIRequests
}

// sampleOf completes a sample from the log lines logged since the change:
// the first module run of key that finished and the Helm apply within it.
func sampleOf(total time.Duration, key string, lines []Entry) Sample {
	s := Sample{Total: total}
	var h helmSteps
	for _, e := range lines {
		if a, ok := h.add(e); ok && a.release == key {
			s.Helm, s.HelmPrep = a.total, a.prep
		}
		if e.Msg() == msgRunDone && e.Str("module") == key {
			s.Run, _ = e.Duration("duration")
			return s
		}
	}
	return s
}
