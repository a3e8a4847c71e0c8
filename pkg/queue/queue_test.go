package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestExponentialBackoff(t *testing.T) {
	b := ExponentialBackoff(5*time.Second, time.Minute)
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, b(n))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}

// runUntil runs q until the handler has seen n tasks and returns their order.
func runUntil(t *testing.T, q *Queue[string], n int, handle Handler[string]) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(ctx context.Context, task string) ([]string, error) {
			seen <- task
			return handle(ctx, task)
		})
	}()
	var order []string
	for len(order) < n {
		select {
		case s := <-seen:
			order = append(order, s)
		case <-time.After(5 * time.Second):
			t.Fatalf("handled %v, want %d tasks", order, n)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	return order
}

func TestOrder(t *testing.T) {
	q := New[string]("main", clocktesting.NewFakeClock(time.Now()), ExponentialBackoff(time.Second, time.Minute))
	q.PushBack("b", "c")
	q.PushFront("a0", "a1")
	q.PushBack("d")
	got := runUntil(t, q, 7, func(_ context.Context, task string) ([]string, error) {
		if task == "b" {
			return []string{"b.1", "b.2"}, nil
		}
		return nil, nil
	})
	want := []string{"a0", "a1", "b", "b.1", "b.2", "c", "d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestFailingTaskRetriesAtHeadAfterBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := New[string]("main", clk, ExponentialBackoff(time.Second, time.Minute))
	q.PushBack("flaky", "next")
	failures := 0
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := make(chan string, 10)
	go func() {
		_ = q.Run(ctx, func(_ context.Context, task string) ([]string, error) {
			seen <- task
			if task == "flaky" && failures < 2 {
				failures++
				return nil, errors.New("boom")
			}
			return nil, nil
		})
	}()
	steps := []struct {
		want    string
		backoff time.Duration // the fake clock must move this far first
	}{{"flaky", 0}, {"flaky", time.Second}, {"flaky", 2 * time.Second}, {"next", 0}}
	for i, step := range steps {
		w := step.want
		if step.backoff > 0 {
			// The retry waits on the fake clock: nothing runs until it moves.
			waitForWaiter(t, clk)
			snap := q.Snapshot()
			if snap.Items[0].Task != "flaky" || snap.Items[0].Failures != i || snap.Items[0].LastError != "boom" {
				t.Fatalf("snapshot during backoff = %+v, want flaky at head with %d failures", snap.Items[0], i)
			}
			clk.Step(step.backoff)
		}
		select {
		case got := <-seen:
			if got != w {
				t.Fatalf("task %d = %q, want %q", i, got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("task %d (%q) never ran", i, w)
		}
	}
}

// waitForWaiter polls until the queue waits on the fake clock.
func waitForWaiter(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("queue never waited for its backoff")
		}
		<-time.After(time.Millisecond)
	}
}

func TestHasRemoveLen(t *testing.T) {
	q := New[string]("main", clocktesting.NewFakeClock(time.Now()), ExponentialBackoff(time.Second, time.Minute))
	q.PushBack("run:a", "run:b", "converge", "run:a")
	isRunA := func(s string) bool { return s == "run:a" }
	if !q.Has(isRunA) {
		t.Error("Has(run:a) = false, want true")
	}
	if n := q.Remove(isRunA); n != 2 {
		t.Errorf("Remove(run:a) = %d, want 2", n)
	}
	if q.Has(isRunA) {
		t.Error("Has(run:a) after Remove = true")
	}
	if n := q.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	snap := q.Snapshot()
	tasks := make([]string, 0, len(snap.Items))
	for _, it := range snap.Items {
		tasks = append(tasks, it.Task)
	}
	if diff := cmp.Diff([]string{"run:b", "converge"}, tasks); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestMergeCombinesConsecutiveTasksOnly(t *testing.T) {
	q := New[string]("hooks", clocktesting.NewFakeClock(time.Now()), ExponentialBackoff(time.Second, time.Minute))
	// Tasks "h:x" of one hook merge into "h:x+y"; other tasks stop merging.
	q.SetMerge(func(head, next string) (string, bool) {
		if head[:2] != next[:2] {
			return "", false
		}
		return head + "+" + next[2:], true
	})
	q.PushBack("a:1", "a:2", "a:3", "b:1", "a:4")
	got := runUntil(t, q, 3, func(context.Context, string) ([]string, error) { return nil, nil })
	want := []string{"a:1+2+3", "b:1", "a:4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handled (-want +got):\n%s", diff)
	}
}

func TestRetryNowEndsTheBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	q := New[string]("main", clk, ExponentialBackoff(time.Hour, time.Hour))
	q.RetryNow() // before any failure: must not shorten the next backoff
	q.PushBack("flaky")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := make(chan int, 10)
	runs := 0
	go func() {
		_ = q.Run(ctx, func(context.Context, string) ([]string, error) {
			runs++
			seen <- runs
			if runs == 1 {
				return nil, errors.New("api server down")
			}
			return nil, nil
		})
	}()
	if got := <-seen; got != 1 {
		t.Fatalf("first run = %d", got)
	}
	waitForWaiter(t, clk)
	select {
	case <-seen:
		t.Fatal("a RetryNow from before the failure cut its backoff short")
	case <-time.After(50 * time.Millisecond):
	}
	q.RetryNow()
	select {
	case got := <-seen:
		if got != 2 {
			t.Fatalf("run after RetryNow = %d, want 2", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the task did not run again after RetryNow, with an hour of backoff left")
	}
}
