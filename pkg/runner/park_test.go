package runner

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// parkingRuns is a RunFunc whose attempts of the modules in gates park
// until their gate yields a result, then run a second step; other modules'
// attempts end at once.
type parkingRuns struct {
	mu    sync.Mutex
	gates map[string]chan error
	// block holds the first step of a module until closed.
	block map[string]chan struct{}
	steps []string // "name:first" and "name:then", in the order they ran
	// thenErr is what the second step returns.
	thenErr error
}

func (p *parkingRuns) record(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, step)
}

func (p *parkingRuns) recorded() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.steps...)
}

func (p *parkingRuns) run(_ context.Context, name string) (Result, error) {
	p.record(name + ":first")
	if b, ok := p.block[name]; ok {
		<-b
	}
	gate, ok := p.gates[name]
	if !ok {
		return Result{}, nil
	}
	return Result{
		Await: func(ctx context.Context) error {
			select {
			case err := <-gate:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Then: func(context.Context, string) (Result, error) {
			p.record(name + ":then")
			return Result{}, p.thenErr
		},
	}, nil
}

func startParking(t *testing.T, workers int, p *parkingRuns) *Pool {
	t.Helper()
	r := New(workers, p.run, queue.ExponentialBackoff(time.Hour, time.Hour), clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func resultOf(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no result", what)
		return nil
	}
}

func TestParkedAttemptHoldsNoWorker(t *testing.T) {
	p := &parkingRuns{gates: map[string]chan error{"slow": make(chan error)}}
	r := startParking(t, 1, p)
	slowDone, fastDone := make(chan error, 1), make(chan error, 1)
	r.Request("slow", func(err error) { slowDone <- err })
	// The only worker is free while slow waits: fast runs to its end.
	r.Request("fast", func(err error) { fastDone <- err })
	if err := resultOf(t, fastDone, "fast"); err != nil {
		t.Fatalf("fast: %v", err)
	}
	select {
	case err := <-slowDone:
		t.Fatalf("slow ended before its wait did: %v", err)
	default:
	}
	if got := r.Parked(); len(got) != 1 || got[0] != "slow" {
		t.Fatalf("Parked() = %v, want [slow]", got)
	}
	p.gates["slow"] <- nil
	if err := resultOf(t, slowDone, "slow"); err != nil {
		t.Fatalf("slow: %v", err)
	}
	want := []string{"slow:first", "fast:first", "slow:then"}
	if got := p.recorded(); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	if got := r.Parked(); len(got) != 0 {
		t.Fatalf("Parked() after the wait = %v", got)
	}
}

func TestParkedAttemptThatFailsBacksOff(t *testing.T) {
	p := &parkingRuns{gates: map[string]chan error{"slow": make(chan error)}}
	r := startParking(t, 1, p)
	done := make(chan error, 1)
	r.Request("slow", func(err error) { done <- err })
	notReady := errors.New("Deployment x: not ready after 5m")
	p.gates["slow"] <- notReady
	if err := resultOf(t, done, "slow"); !errors.Is(err, notReady) {
		t.Fatalf("waiter got %v, want the wait's error", err)
	}
	if r.Failures("slow") != 1 || !r.BackingOff("slow") {
		t.Fatalf("failures %d, backing off %v: want 1 and true", r.Failures("slow"), r.BackingOff("slow"))
	}
	for _, s := range p.recorded() {
		if s == "slow:then" {
			t.Fatal("the step after a failed wait ran")
		}
	}
}

func TestRequestDuringParkWaitsForTheAttempt(t *testing.T) {
	gate := make(chan error)
	p := &parkingRuns{gates: map[string]chan error{"slow": gate}}
	r := startParking(t, 2, p)
	first, second := make(chan error, 1), make(chan error, 1)
	r.Request("slow", func(err error) { first <- err })
	waitFor(t, "a parked attempt", func() bool { return len(r.Parked()) == 1 })
	r.Request("slow", func(err error) { second <- err })
	// Runs of a module never overlap, parked or not.
	if got := r.Waiting(); len(got) != 0 {
		t.Fatalf("a second attempt queued while the first waits: %v", got)
	}
	gate <- nil
	if err := resultOf(t, first, "first attempt"); err != nil {
		t.Fatal(err)
	}
	gate <- nil // the second attempt parks in turn
	if err := resultOf(t, second, "second attempt"); err != nil {
		t.Fatal(err)
	}
	want := []string{"slow:first", "slow:then", "slow:first", "slow:then"}
	if got := p.recorded(); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}

func TestCancelEndsAParkedAttempt(t *testing.T) {
	p := &parkingRuns{gates: map[string]chan error{"slow": make(chan error)}}
	r := startParking(t, 1, p)
	done := make(chan error, 1)
	r.Request("slow", func(err error) { done <- err })
	waitFor(t, "a parked attempt", func() bool { return len(r.Parked()) == 1 })
	r.Cancel("slow") // returns once the attempt is over
	if err := resultOf(t, done, "slow"); !errors.Is(err, ErrCancelled) {
		t.Fatalf("waiter got %v, want ErrCancelled", err)
	}
	if r.BackingOff("slow") || r.Failures("slow") != 0 {
		t.Fatal("a cancelled wait counted as a failure")
	}
}

func TestThenGoesAheadOfNewAttempts(t *testing.T) {
	gate := make(chan error)
	busy := make(chan struct{})
	p := &parkingRuns{gates: map[string]chan error{"slow": gate}, block: map[string]chan struct{}{"busy": busy}}
	r := startParking(t, 1, p)
	r.Request("slow", nil)
	waitFor(t, "a parked attempt", func() bool { return len(r.Parked()) == 1 })
	r.Request("busy", nil) // holds the only worker until busy is closed
	waitFor(t, "condition", func() bool { return slices.Contains(p.recorded(), "busy:first") })
	r.Request("a", nil)
	r.Request("b", nil)
	gate <- nil // slow's next step is queued behind a and b in time
	waitFor(t, "condition", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.mods["slow"].then != nil })
	close(busy)
	waitFor(t, "condition", func() bool { return slices.Contains(p.recorded(), "b:first") })
	want := []string{"slow:first", "busy:first", "slow:then", "a:first", "b:first"}
	if got := p.recorded(); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}

func TestTerminalErrorIsNotRetried(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 1, s)
	done := make(chan error, 2)
	r.Request("a", func(err error) { done <- err })
	s.expectStart(t, "a")
	s.ch("a") <- queue.TerminalError(errors.New("configVersion v0 is not supported"))
	if err := resultOf(t, done, "a"); !queue.IsTerminal(err) {
		t.Fatalf("waiter got %v, want the terminal error", err)
	}
	if r.BackingOff("a") || r.Failures("a") != 1 {
		t.Fatalf("backing off %v, failures %d: want no retry and one failure", r.BackingOff("a"), r.Failures("a"))
	}
	// New inputs run it again.
	r.Request("a", func(err error) { done <- err })
	s.expectStart(t, "a")
	s.ch("a") <- nil
	if err := resultOf(t, done, "a again"); err != nil {
		t.Fatal(err)
	}
}

func TestRetryNowFollowingHearsThePark(t *testing.T) {
	gate := make(chan error)
	p := &parkingRuns{gates: map[string]chan error{"slow": gate}}
	r := startParking(t, 1, p)
	parked, done := make(chan struct{}, 1), make(chan error, 1)
	r.RetryNowFollowing("slow", func(err error) { done <- err }, func() { parked <- struct{}{} })
	select {
	case <-parked:
	case <-time.After(10 * time.Second):
		t.Fatal("parked never called while the attempt waits")
	}
	select {
	case err := <-done:
		t.Fatalf("the attempt's end heard before its wait ended: %v", err)
	default:
	}
	gate <- nil
	if err := resultOf(t, done, "slow"); err != nil {
		t.Fatal(err)
	}
	// An attempt that never parks drops the callback.
	r.RetryNowFollowing("fast", func(err error) { done <- err }, func() { t.Error("parked called for an attempt that did not park") })
	if err := resultOf(t, done, "fast"); err != nil {
		t.Fatal(err)
	}
}
