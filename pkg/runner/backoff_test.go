package runner

import (
	"errors"
	"testing"
	"time"
)

// TestRunnerNextRetry: a failed attempt starts a backoff whose end
// NextRetry tells, and OnAttemptEnd hears of it; a retry now ends it.
func TestRunnerNextRetry(t *testing.T) {
	s := newScriptedRuns()
	r := startSlowRunner(t, s)
	heard := make(chan string, 1)
	r.OnAttemptEnd(func(name string) { heard <- name })
	if got := r.NextRetry("a"); !got.IsZero() {
		t.Fatalf("next retry %v before any run, want none", got)
	}
	before := time.Now()
	r.Request("a", nil)
	s.expectStart(t, "a")
	s.ch("a") <- errors.New("boom")
	if name := <-heard; name != "a" {
		t.Errorf("OnAttemptEnd heard %q, want a", name)
	}
	if got := r.NextRetry("a"); got.Before(before.Add(time.Hour)) || got.After(time.Now().Add(time.Hour)) {
		t.Errorf("next retry %v, want an hour after the failure (%v)", got, before)
	}
	r.RetryNow("a", nil)
	if got := r.NextRetry("a"); !got.IsZero() {
		t.Errorf("next retry %v after a retry now, want none", got)
	}
	s.expectStart(t, "a")
	s.ch("a") <- nil
	if name := <-heard; name != "a" {
		t.Errorf("OnAttemptEnd heard %q after a success, want a", name)
	}
	if n := r.Failures("a"); n != 0 {
		t.Errorf("%d failures after a success, want 0", n)
	}
}
