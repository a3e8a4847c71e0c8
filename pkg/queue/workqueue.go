package queue

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// NewWorkQueue returns client-go's typed work queue, rate-limited and
// delaying: the one construction of the module pool (pkg/runner) and the
// ExecutionHook controller. What its users build on:
//   - an item is handed to one worker at a time: added again while a
//     worker holds it (between Get and Done), it is handed out once more
//     after Done, never twice at once, so one item is at most once pending;
//   - AddRateLimited waits as long as limiter says (BackoffLimiter: a
//     Backoff's delay before the n-th retry of an item since its last
//     Forget); AddAfter waits a given time; both on clk;
//   - order, when not nil, decides which queued item comes next
//     (workqueue.DefaultQueue's FIFO otherwise).
//
// name names the queue in client-go's workqueue metrics, when a provider
// is set. ShutDown ends the queue and its goroutine.
func NewWorkQueue[T comparable](name string, clk clock.WithTicker, limiter workqueue.TypedRateLimiter[T], order workqueue.Queue[T]) workqueue.TypedRateLimitingInterface[T] {
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[T]{
		Name:  name,
		Clock: clk,
		Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[T]{Name: name, Clock: clk, Queue: order}),
	})
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[T]{Name: name, Clock: clk, DelayingQueue: delaying})
}

// BackoffLimiter returns a workqueue rate limiter that waits backoff(n)
// before an item's n-th retry since its last Forget.
func BackoffLimiter[T comparable](backoff Backoff) workqueue.TypedRateLimiter[T] {
	return &backoffLimiter[T]{backoff: backoff, retries: map[T]int{}}
}

// backoffLimiter counts each item's retries; mu guards retries.
type backoffLimiter[T comparable] struct {
	backoff Backoff
	mu      sync.Mutex
	retries map[T]int
}

func (l *backoffLimiter[T]) When(item T) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries[item]++
	return l.backoff(l.retries[item])
}

func (l *backoffLimiter[T]) Forget(item T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.retries, item)
}

func (l *backoffLimiter[T]) NumRequeues(item T) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retries[item]
}
