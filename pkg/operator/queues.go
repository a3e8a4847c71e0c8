package operator

import (
	"context"
	"sort"
	"sync"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// mainQueue is the queue of lifecycle work and of bindings without a queue.
const mainQueue = "main"

// queues owns the named queues. Run starts a worker for every queue,
// including those created later by hooks' bindings, and stops them all when
// its context ends.
type queues struct {
	clock   clock.Clock
	backoff queue.Backoff
	merge   func(head, next task) (task, bool)

	mu     sync.Mutex
	byName map[string]*queue.Queue[task]
	added  chan struct{} // signals queues created after Run started
}

func newQueues(clk clock.Clock, backoff queue.Backoff, merge func(head, next task) (task, bool)) *queues {
	qs := &queues{clock: clk, backoff: backoff, merge: merge, byName: map[string]*queue.Queue[task]{}, added: make(chan struct{}, 1)}
	qs.get(mainQueue)
	return qs
}

// get returns the named queue, creating it on first use.
func (qs *queues) get(name string) *queue.Queue[task] {
	if name == "" {
		name = mainQueue
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q, ok := qs.byName[name]; ok {
		return q
	}
	q := queue.New[task](name, qs.clock, qs.backoff)
	q.SetMerge(qs.merge)
	qs.byName[name] = q
	select {
	case qs.added <- struct{}{}:
	default: // a signal is already pending; Run rescans every queue
	}
	return q
}

// Run works every queue with handle until ctx ends.
func (qs *queues) Run(ctx context.Context, handle queue.Handler[task]) error {
	var wg sync.WaitGroup
	started := map[*queue.Queue[task]]bool{}
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

// snapshots returns every queue's snapshot, main first, then by name.
func (qs *queues) snapshots() []queue.Snapshot[task] {
	qs.mu.Lock()
	names := make([]string, 0, len(qs.byName))
	for n := range qs.byName {
		if n != mainQueue {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	list := make([]*queue.Queue[task], 0, 1+len(names))
	list = append(list, qs.byName[mainQueue])
	for _, n := range names {
		list = append(list, qs.byName[n])
	}
	qs.mu.Unlock()
	out := make([]queue.Snapshot[task], 0, len(list))
	for _, q := range list {
		out = append(out, q.Snapshot())
	}
	return out
}
