package queue

import (
	"context"
	"sort"
	"sync"

	"k8s.io/utils/clock"
)

// Set owns named queues of one task type, created on first use. Run starts
// a worker for every queue, including those created while it runs, and
// stops them all when its context ends. Its methods are safe for
// concurrent use.
type Set[T any] struct {
	main    string
	clock   clock.Clock
	backoff Backoff
	merge   func(head, next T) (T, bool)

	mu     sync.Mutex
	byName map[string]*Queue[T]
	added  chan struct{} // signals queues created after Run started
}

// NewSet returns a set with the queue named main, which Get("") also
// returns. Every queue retries with backoff and merges with merge (nil
// merges nothing).
func NewSet[T any](main string, clk clock.Clock, backoff Backoff, merge func(head, next T) (T, bool)) *Set[T] {
	qs := &Set[T]{main: main, clock: clk, backoff: backoff, merge: merge, byName: map[string]*Queue[T]{}, added: make(chan struct{}, 1)}
	qs.Get(main)
	return qs
}

// Get returns the named queue, creating it on first use.
func (qs *Set[T]) Get(name string) *Queue[T] {
	if name == "" {
		name = qs.main
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q, ok := qs.byName[name]; ok {
		return q
	}
	q := New[T](name, qs.clock, qs.backoff)
	if qs.merge != nil {
		q.SetMerge(qs.merge)
	}
	qs.byName[name] = q
	select {
	case qs.added <- struct{}{}:
	default: // a signal is already pending; Run rescans every queue
	}
	return q
}

// Run works every queue with handle until ctx ends.
func (qs *Set[T]) Run(ctx context.Context, handle Handler[T]) error {
	var wg sync.WaitGroup
	started := map[*Queue[T]]bool{}
	startNew := func() {
		qs.mu.Lock()
		defer qs.mu.Unlock()
		for _, q := range qs.byName {
			if !started[q] {
				started[q] = true
				wg.Go(func() { _ = q.Run(ctx, handle) })
			}
		}
	}
	startNew()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-qs.added:
			startNew()
		}
	}
}

// Snapshots returns every queue's snapshot, main first, then by name.
func (qs *Set[T]) Snapshots() []Snapshot[T] {
	qs.mu.Lock()
	names := make([]string, 0, len(qs.byName))
	for n := range qs.byName {
		if n != qs.main {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	list := make([]*Queue[T], 0, 1+len(names))
	list = append(list, qs.byName[qs.main])
	for _, n := range names {
		list = append(list, qs.byName[n])
	}
	qs.mu.Unlock()
	out := make([]Snapshot[T], 0, len(list))
	for _, q := range list {
		out = append(out, q.Snapshot())
	}
	return out
}

// RetryNow ends the backoff of the failed head task of every queue.
func (qs *Set[T]) RetryNow() {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	for _, q := range qs.byName {
		q.RetryNow()
	}
}
