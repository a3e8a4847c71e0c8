package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestBackoffLimiterCountsRetriesUntilForget(t *testing.T) {
	l := BackoffLimiter[string](ExponentialBackoff(time.Second, 4*time.Second))
	got := make([]time.Duration, 0, 6)
	for range 4 {
		got = append(got, l.When("a"))
	}
	got = append(got, l.When("b"))
	if n := l.NumRequeues("a"); n != 4 {
		t.Errorf("retries of a = %d, want 4", n)
	}
	l.Forget("a")
	got = append(got, l.When("a"))
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, time.Second, time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delays (-want +got):\n%s", d)
	}
}

// firstFirst is a Queue that hands "first" out before anything else.
type firstFirst struct{ items []string }

func (q *firstFirst) Touch(string) {}
func (q *firstFirst) Push(it string) {
	if it == "first" {
		q.items = append([]string{it}, q.items...)
		return
	}
	q.items = append(q.items, it)
}
func (q *firstFirst) Len() int { return len(q.items) }
func (q *firstFirst) Pop() string {
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

// The work queue's guarantees the pool and the controller build on: an
// item added while held is handed out once more after Done, not at once;
// the order decides what comes next; AddRateLimited waits on the clock.
func TestNewWorkQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := NewWorkQueue("test", clk, BackoffLimiter[string](ExponentialBackoff(time.Minute, time.Minute)), &firstFirst{})
	defer q.ShutDown()
	q.Add("a")
	got, _ := q.Get()
	q.Add("a")
	q.Add("a")
	if q.Len() != 0 {
		t.Fatalf("an item held by a worker was queued again before Done: len %d", q.Len())
	}
	q.Done(got)
	if q.Len() != 1 {
		t.Fatalf("len after Done = %d, want the one pending item", q.Len())
	}
	q.Add("first")
	if it, _ := q.Get(); it != "first" {
		t.Errorf("got %q, want the order's first", it)
	}
	if it, _ := q.Get(); it != "a" {
		t.Errorf("got %q, want a", it)
	}
	q.AddRateLimited("b")
	if q.NumRequeues("b") != 1 || q.Len() != 0 {
		t.Fatalf("rate-limited item: requeues %d, len %d; want 1 and waiting", q.NumRequeues("b"), q.Len())
	}
	clk.Step(time.Minute)
	if it, _ := q.Get(); it != "b" {
		t.Errorf("got %q after the delay, want b", it)
	}
}
