package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// startSlowRunner is startRunner with a backoff no test waits out: a run
// that starts after a failure was started by a retry-now path.
func startSlowRunner(t *testing.T, s *scriptedRuns) *Pool {
	t.Helper()
	r := New(2, s.run, queue.ExponentialBackoff(time.Hour, time.Hour), clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// aBacksOff reports whether module "a" waits for its backoff.
func aBacksOff(r *Pool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.state("a").retryAt.IsZero()
}

func TestRunnerRetryNow(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		// act runs once module "a" failed its first attempt and waits for
		// its hour-long backoff; it returns what retryFailedNow returned.
		act  func(r *Pool) []string
		want []string // runs started by act, in order
		// wantRetried is what retryFailedNow returned.
		wantRetried []string
	}{
		{name: "a plain request waits for the backoff", act: func(r *Pool) []string { r.Request("a", nil); return nil }},
		{name: "changed inputs skip the backoff", act: func(r *Pool) []string { r.RetryNow("a", nil); return nil }, want: []string{"a"}},
		{name: "retry of every failed module", act: (*Pool).RetryFailedNow, want: []string{"a"}, wantRetried: []string{"a"}},
		{name: "another module's change does not touch it", act: func(r *Pool) []string { r.RetryNow("b", nil); return nil }, want: []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScriptedRuns()
			r := startSlowRunner(t, s)
			r.Request("a", nil)
			s.expectStart(t, "a")
			s.ch("a") <- boom
			waitFor(t, "a to back off", func() bool { return aBacksOff(r) })
			if diff := cmp.Diff(tt.wantRetried, tt.act(r)); diff != "" {
				t.Errorf("retried (-want +got):\n%s", diff)
			}
			for _, want := range tt.want {
				s.expectStart(t, want)
				s.ch(want) <- nil
			}
			select {
			case name := <-s.started:
				t.Fatalf("unexpected run of %q", name)
			case <-time.After(50 * time.Millisecond): // a wrong run would start at once
			}
		})
	}
}

func TestRunnerInputChangeDuringFailingRunRetriesAtOnce(t *testing.T) {
	s := newScriptedRuns()
	r := startSlowRunner(t, s)
	r.Request("a", nil)
	s.expectStart(t, "a")
	r.RetryNow("a", nil) // the inputs change while the attempt runs
	s.ch("a") <- errors.New("read the old inputs")
	s.expectStart(t, "a") // at once, not after the hour
	s.ch("a") <- errors.New("still failing")
	waitFor(t, "a to back off after the second failure", func() bool { return aBacksOff(r) })
	if got := r.Failures("a"); got != 2 {
		t.Errorf("failures = %d, want 2: the streak counts both", got)
	}
}

func TestRunnerRetryNowRestartsTheBackoff(t *testing.T) {
	s := newScriptedRuns()
	var delays []int
	r := New(1, s.run, func(n int) time.Duration { delays = append(delays, n); return time.Hour }, clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	r.Request("a", nil)
	for range 2 {
		s.expectStart(t, "a")
		s.ch("a") <- errors.New("boom")
		waitFor(t, "a to back off", func() bool { return aBacksOff(r) })
		r.RetryNow("a", nil)
	}
	s.expectStart(t, "a")
	s.ch("a") <- errors.New("boom")
	waitFor(t, "a to back off", func() bool { return aBacksOff(r) })
	r.mu.Lock()
	got := append([]int(nil), delays...)
	r.mu.Unlock()
	if diff := cmp.Diff([]int{1, 1, 1}, got); diff != "" {
		t.Errorf("backoff steps asked (-want +got):\n%s", diff)
	}
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
		<-time.After(time.Millisecond)
	}
}
