package runner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// scriptedRuns is a RunFunc whose calls block until released, so tests
// control when each attempt ends.
type scriptedRuns struct {
	mu       sync.Mutex
	started  chan string
	release  map[string]chan error
	inFlight map[string]int
	overlap  bool
}

func newScriptedRuns() *scriptedRuns {
	return &scriptedRuns{started: make(chan string, 100), release: map[string]chan error{}, inFlight: map[string]int{}}
}

func (s *scriptedRuns) ch(name string) chan error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.release[name]; !ok {
		s.release[name] = make(chan error)
	}
	return s.release[name]
}

func (s *scriptedRuns) run(ctx context.Context, name string) (Result, error) {
	s.mu.Lock()
	s.inFlight[name]++
	if s.inFlight[name] > 1 {
		s.overlap = true
	}
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inFlight[name]--; s.mu.Unlock() }()
	s.started <- name
	select {
	case err := <-s.ch(name):
		return Result{}, err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

func (s *scriptedRuns) expectStart(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.started:
		if got != want {
			t.Fatalf("started %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%q never started", want)
	}
}

func startRunner(t *testing.T, workers int, s *scriptedRuns) *Pool {
	t.Helper()
	r := New(workers, s.run, queue.ExponentialBackoff(time.Millisecond, time.Millisecond), clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func TestRunnerCoalescesRequestsAndNeverOverlaps(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 2, s)
	results := make(chan error, 10)
	r.Request("a", func(err error) { results <- err })
	s.expectStart(t, "a")
	// Three requests while a runs: they make one more run, which their
	// waiters see, not the one in progress.
	for range 3 {
		r.Request("a", func(err error) { results <- err })
	}
	s.ch("a") <- errors.New("first")
	if err := <-results; err == nil || err.Error() != "first" {
		t.Fatalf("first waiter got %v, want the first attempt's error", err)
	}
	s.expectStart(t, "a") // the retry after the failure, carrying the pending requests
	s.ch("a") <- nil
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("later waiter got %v, want the second attempt's success", err)
		}
	}
	select {
	case name := <-s.started:
		t.Fatalf("unexpected extra run of %q", name)
	default:
	}
	if s.overlap {
		t.Error("two runs of one module overlapped")
	}
}

func TestRunnerFailingModuleDoesNotBlockOthers(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 1, s)
	r.Request("bad", nil)
	s.expectStart(t, "bad")
	s.ch("bad") <- errors.New("boom")
	// With one worker, "good" still runs while "bad" backs off and retries.
	r.Request("good", nil)
	for seen := map[string]bool{}; !seen["good"]; {
		select {
		case name := <-s.started:
			seen[name] = true
			s.ch(name) <- map[bool]error{true: nil, false: errors.New("boom")}[name == "good"]
		case <-time.After(5 * time.Second):
			t.Fatal("good never ran while bad kept failing")
		}
	}
	if r.Failures("bad") < 1 {
		t.Errorf("bad failures = %d, want at least 1", r.Failures("bad"))
	}
}

func TestRunnerCancelStopsRunAndRetries(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 1, s)
	results := make(chan error, 2)
	r.Request("a", nil)
	s.expectStart(t, "a")
	r.Request("a", func(err error) { results <- err }) // pending behind the running one
	r.Cancel("a")
	if err := <-results; !errors.Is(err, ErrCancelled) {
		t.Errorf("pending waiter got %v, want ErrCancelled", err)
	}
	r.Request("b", nil)
	s.expectStart(t, "b") // not a: its pending run and retry are gone
	s.ch("b") <- nil
}

func TestRunnerNotifyFollowsTheNextAttemptWithoutAskingForOne(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 1, s)
	r.Request("a", nil)
	s.expectStart(t, "a")
	results := make(chan error, 2)
	r.Notify("a", func(err error) { results <- err })
	s.ch("a") <- nil // the attempt running when Notify was called
	r.Request("b", nil)
	s.expectStart(t, "b") // no run of a was asked for
	s.ch("b") <- nil
	select {
	case err := <-results:
		t.Fatalf("notified of the attempt that ran before: %v", err)
	default:
	}
	r.Request("a", nil)
	s.expectStart(t, "a")
	s.ch("a") <- errors.New("second")
	if err := <-results; err == nil || err.Error() != "second" {
		t.Errorf("notified with %v, want the next attempt's error", err)
	}
}

func TestRunnerSupersededTellsTheRunningAttemptOfNewInputs(t *testing.T) {
	s := newScriptedRuns()
	r := startRunner(t, 1, s)
	if ch := r.Superseded("a"); ch != nil {
		t.Fatal("a channel for a module that does not run")
	}
	r.Request("a", nil)
	s.expectStart(t, "a")
	ch := r.Superseded("a")
	r.Request("a", nil) // not new inputs
	select {
	case <-ch:
		t.Fatal("superseded by a plain request")
	default:
	}
	r.RetryNow("a", nil)
	r.RetryNow("a", nil) // twice: closed once
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("not superseded by RetryNow")
	}
	s.ch("a") <- nil
	s.expectStart(t, "a") // the run for the new inputs
	s.ch("a") <- nil
}
