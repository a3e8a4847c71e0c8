package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// TestRetryFailedNowRunsFailedModulesAtOnce fails two modules with an
// hour of backoff ahead and expects both to run again at once when told,
// with their failure streak kept.
func TestRetryFailedNowRunsFailedModulesAtOnce(t *testing.T) {
	s := newScriptedRuns()
	clk := clocktesting.NewFakeClock(time.Now())
	r := New(2, s.run, queue.ExponentialBackoff(time.Hour, time.Hour), clk)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	failedAt := clk.Now()
	for _, name := range []string{"b", "a"} {
		r.Request(name, nil)
		s.expectStart(t, name)
		s.ch(name) <- errors.New("connection refused")
	}
	r.Request("ok", nil)
	s.expectStart(t, "ok")
	s.ch("ok") <- nil
	// The pool records a result after the run returns it.
	waitFor(t, "a and b backing off", func() bool { return r.Failures("a") == 1 && r.Failures("b") == 1 })
	clk.Step(time.Minute) // well inside the backoff
	if got := r.RetryFailedNow(); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("retryFailedNow() = %v, want [a b]", got)
	}
	started := map[string]bool{}
	for range 2 {
		select {
		case name := <-s.started:
			started[name] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v ran again, with an hour of backoff left", started)
		}
	}
	if !started["a"] || !started["b"] {
		t.Errorf("ran again: %v, want a and b", started)
	}
	if n, since := r.Failures("a"), r.FailingSince("a"); n != 1 || !since.Equal(failedAt) {
		t.Errorf("a: failures %d since %v; want 1 since %v", n, since, failedAt)
	}
	if since := r.FailingSince("ok"); !since.IsZero() {
		t.Errorf("failingSince(ok) = %v, want zero", since)
	}
	s.ch("a") <- nil
	s.ch("b") <- nil
}
