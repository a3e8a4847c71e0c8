// Package queue provides named FIFO task queues with one worker each:
// head and tail insertion, retry of a failing head task with exponential
// backoff, and snapshots for debugging; and a Set of such queues, created
// on first use.
package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Handler runs one task. On success it may return tasks to run next, ahead of
// everything already queued (in the order given). On error the task stays at
// the head of the queue and is retried after a backoff.
type Handler[T any] func(ctx context.Context, task T) (next []T, err error)

// Backoff computes the delay before retry number n (n >= 1).
type Backoff func(n int) time.Duration

// ExponentialBackoff doubles from base up to max: base, 2*base, 4*base, ...
func ExponentialBackoff(base, maxDelay time.Duration) Backoff {
	return func(n int) time.Duration {
		d := base
		for i := 1; i < n && d < maxDelay; i++ {
			d *= 2
		}
		return min(d, maxDelay)
	}
}

// Item is a queued task with its bookkeeping.
type Item[T any] struct {
	Task      T
	Queued    time.Time
	Failures  int
	LastError string
}

// Queue is a FIFO of tasks run one at a time by Run. All methods are safe
// for concurrent use; the queue owns its items.
type Queue[T any] struct {
	name    string
	clock   clock.Clock
	backoff Backoff

	// merge, when set, combines the head task with the tasks right behind
	// it before the head is handled.
	merge func(head, next T) (T, bool)

	mu      sync.Mutex
	items   []*Item[T]
	current *Item[T] // being handled, not in items
	status  string
	wake    chan struct{}
	retry   chan struct{} // cuts a failed head task's backoff short
}

// New returns an empty queue.
func New[T any](name string, clk clock.Clock, backoff Backoff) *Queue[T] {
	return &Queue[T]{name: name, clock: clk, backoff: backoff, wake: make(chan struct{}, 1), retry: make(chan struct{}, 1), status: "idle"}
}

// SetMerge makes the queue combine consecutive tasks: when a task reaches
// the head, every task right behind it for which merge reports true is
// folded into it and removed, until the first that is not. Call it before
// Run.
func (q *Queue[T]) SetMerge(merge func(head, next T) (T, bool)) { q.merge = merge }

// Name returns the queue's name.
func (q *Queue[T]) Name() string { return q.name }

// PushBack appends tasks at the tail.
func (q *Queue[T]) PushBack(tasks ...T) {
	q.mu.Lock()
	now := q.clock.Now()
	for _, t := range tasks {
		q.items = append(q.items, &Item[T]{Task: t, Queued: now})
	}
	q.mu.Unlock()
	q.signal()
}

// PushFront inserts tasks at the head, keeping their given order.
func (q *Queue[T]) PushFront(tasks ...T) {
	q.mu.Lock()
	q.items = slices.Insert(q.items, 0, q.newItems(tasks)...)
	q.mu.Unlock()
	q.signal()
}

func (q *Queue[T]) newItems(tasks []T) []*Item[T] {
	now := q.clock.Now()
	items := make([]*Item[T], len(tasks))
	for i, t := range tasks {
		items[i] = &Item[T]{Task: t, Queued: now}
	}
	return items
}

// Has reports whether a queued task (not the one being handled) matches.
func (q *Queue[T]) Has(match func(T) bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.ContainsFunc(q.items, func(it *Item[T]) bool { return match(it.Task) })
}

// Remove drops queued tasks that match and returns how many were dropped.
// The task being handled is not affected.
func (q *Queue[T]) Remove(match func(T) bool) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.items)
	q.items = slices.DeleteFunc(q.items, func(it *Item[T]) bool { return match(it.Task) })
	return n - len(q.items)
}

// Len returns the number of queued tasks plus the one being handled.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.items)
	if q.current != nil {
		n++
	}
	return n
}

// Snapshot is a point-in-time copy of a queue for debugging.
type Snapshot[T any] struct {
	Name   string
	Status string
	// Items lists the task being handled (if any) first, then the queue.
	Items []Item[T]
}

// Snapshot copies the queue's state.
func (q *Queue[T]) Snapshot() Snapshot[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Snapshot[T]{Name: q.name, Status: q.status}
	if q.current != nil {
		s.Items = append(s.Items, *q.current)
	}
	for _, it := range q.items {
		s.Items = append(s.Items, *it)
	}
	return s
}

// RetryNow ends the backoff of a failed head task, if one is waiting, so
// that it runs again at once: what it failed on is known to be fixed.
func (q *Queue[T]) RetryNow() {
	select {
	case q.retry <- struct{}{}:
	default:
	}
}

func (q *Queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run handles tasks until ctx is cancelled. A failing task stays at the head
// and is retried after Backoff(failures); ctx cancellation interrupts the wait.
func (q *Queue[T]) Run(ctx context.Context, handle Handler[T]) error {
	for {
		item := q.take()
		if item == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-q.wake:
				continue
			}
		}
		next, err := handle(ctx, item.Task)
		select {
		case <-ctx.Done():
			// Interrupted, not finished: it runs again after a restart.
			q.putBack(item)
			return nil
		default:
		}
		if err == nil {
			q.finish(next)
			continue
		}
		delay := q.fail(item, err)
		select { // a RetryNow from before this failure is stale
		case <-q.retry:
		default:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-q.clock.After(delay):
		case <-q.retry:
		}
	}
}

func (q *Queue[T]) take() *Item[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		q.status = "idle"
		return nil
	}
	q.current, q.items = q.items[0], q.items[1:]
	for q.merge != nil && len(q.items) > 0 {
		merged, ok := q.merge(q.current.Task, q.items[0].Task)
		if !ok {
			break
		}
		q.current.Task, q.items = merged, q.items[1:]
	}
	q.status = "running"
	return q.current
}

func (q *Queue[T]) finish(next []T) {
	q.mu.Lock()
	q.current = nil
	q.items = slices.Insert(q.items, 0, q.newItems(next)...)
	q.mu.Unlock()
}

// fail puts the item back at the head and returns the retry delay.
func (q *Queue[T]) fail(item *Item[T], err error) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	item.Failures++
	item.LastError = err.Error()
	q.current = nil
	q.items = slices.Insert(q.items, 0, item)
	delay := q.backoff(item.Failures)
	q.status = fmt.Sprintf("retry in %s after %d failures", delay, item.Failures)
	return delay
}

func (q *Queue[T]) putBack(item *Item[T]) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.current = nil
	q.items = slices.Insert(q.items, 0, item)
}
