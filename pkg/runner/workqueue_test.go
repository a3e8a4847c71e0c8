package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// startFakeClockRunner is startRunner with a one-minute backoff on a
// fake clock the test steps.
func startFakeClockRunner(t *testing.T, workers int, s *scriptedRuns) (*Pool, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	r := New(workers, s.run, queue.ExponentialBackoff(time.Minute, time.Minute), clk)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r, clk
}

// The backoff runs on the pool's clock through the work queue's delays: a
// request during it is served once it ends, not before, and other modules
// go ahead meanwhile.
func TestBackoffWaitsOnThePoolsClock(t *testing.T) {
	s := newScriptedRuns()
	r, clk := startFakeClockRunner(t, 1, s)
	r.Request("a", nil)
	s.expectStart(t, "a")
	s.ch("a") <- errors.New("boom")
	waitFor(t, "a to back off", func() bool { return r.BackingOff("a") })
	if got := r.Waiting(); len(got) != 0 {
		t.Errorf("waiting = %v, want none: a backs off", got)
	}
	r.Request("a", nil) // waits for the backoff
	r.Request("b", nil)
	s.expectStart(t, "b")
	s.ch("b") <- nil
	clk.Step(time.Minute)
	s.expectStart(t, "a")
	if r.BackingOff("a") {
		t.Error("a still backs off while it runs")
	}
	s.ch("a") <- nil
}

// An item of the work queue that no run wants any more (the backoff
// RetryNow ended still hands the module out when it would have ended; a
// cancelled request's item stays queued) is dropped; one that comes out
// before the module's backoff ends is put back for the rest of it.
func TestStartDropsItemsNoRunWants(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	r := New(1, func(context.Context, string) (Result, error) { return Result{}, nil }, queue.ExponentialBackoff(time.Minute, time.Minute), clk)
	t.Cleanup(r.queue.ShutDown)
	ctx := t.Context()
	start := func(ctx context.Context, name string) bool {
		runCtx, cancel := context.WithCancel(ctx)
		_, ok := r.start(runCtx, cancel, name)
		if !ok {
			cancel()
		}
		return ok
	}
	if start(ctx, "unknown") {
		t.Error("started a module never requested")
	}
	r.mu.Lock()
	st := r.state("a")
	st.pending, st.retryAt = true, clk.Now().Add(time.Minute)
	r.mu.Unlock()
	if start(ctx, "a") {
		t.Fatal("started a module before its backoff ended")
	}
	clk.Step(time.Minute)
	if it, _ := r.queue.Get(); it != (item{name: "a"}) {
		t.Fatalf("item %v came back, want a's", it)
	}
	if !start(ctx, "a") {
		t.Fatal("a did not start once its backoff ended")
	}
	r.finish(false, "a", st, false, nil)
	if start(ctx, "a") {
		t.Error("started a again without a request")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r.Request("a", nil)
	if start(cancelled, "a") {
		t.Error("started a run after the pool stopped")
	}
}
