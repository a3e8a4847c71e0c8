package queuemetrics

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// fakeRecorder keeps what was published last, per queue.
type fakeRecorder struct {
	mu      sync.Mutex
	lengths map[string]int
	waits   map[string]time.Duration
	rounds  int
}

func (f *fakeRecorder) QueueLength(q string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lengths[q] = n
	// "empty" is the last queue of a round: the round is whole once its
	// length is recorded.
	if q == "empty" {
		f.rounds++
	}
}

func (f *fakeRecorder) QueueWait(q string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits[q] = d
}

func (f *fakeRecorder) state() (int, map[string]int, map[string]time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rounds, clone(f.lengths), clone(f.waits)
}

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestRun: each round publishes every queue's length and its head task's
// wait, at once and then every Interval; an empty queue has no wait.
func TestRun(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	snaps := func() []queue.Snapshot[string] {
		return []queue.Snapshot[string]{
			{Name: "main", Items: []queue.Item[string]{{Task: "a", Queued: start}, {Task: "b", Queued: start}}},
			{Name: "empty"},
		}
	}
	rec := &fakeRecorder{lengths: map[string]int{}, waits: map[string]time.Duration{}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- New(snaps, rec, clk).Run(ctx) }()

	eventually(t, "the first round", func() bool { r, _, _ := rec.state(); return r >= 1 })
	_, lengths, waits := rec.state()
	if diff := cmp.Diff(map[string]int{"main": 2, "empty": 0}, lengths); diff != "" {
		t.Errorf("lengths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]time.Duration{"main": 0}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	eventually(t, "the timer", clk.HasWaiters)
	clk.Step(Interval)
	eventually(t, "the second round", func() bool { r, _, _ := rec.state(); return r >= 2 })
	if _, _, waits := rec.state(); waits["main"] != Interval {
		t.Errorf("main's wait after one interval = %s, want %s", waits["main"], Interval)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// eventually waits until cond holds, failing after 10 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
		runtime.Gosched()
	}
}

// TestRunWithoutRecorder: with no recorder, Run returns at once.
func TestRunWithoutRecorder(t *testing.T) {
	p := New(func() []queue.Snapshot[string] { t.Error("snapshots read without a recorder"); return nil }, nil, clocktesting.NewFakeClock(time.Now()))
	if err := p.Run(t.Context()); err != nil {
		t.Errorf("Run: %v", err)
	}
}
