package operator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// errCancelled is what waiters of a module's run learn when the module was
// cancelled (disabled) before the run finished.
var errCancelled = errors.New("module run cancelled")

// runFunc runs a module once and reports whether it must run again at once
// (its afterHelm hooks changed its values).
type runFunc func(ctx context.Context, module string) (again bool, err error)

// moduleRunner runs modules on a bounded pool of workers, apart from the
// main queue, so that a failing module retries with backoff without
// holding up other modules or the main queue. Runs of one module never
// overlap, and at most one more run is pending per module. The runner owns
// its state; its methods are safe for concurrent use.
type moduleRunner struct {
	workers int
	run     runFunc
	backoff queue.Backoff
	clock   clock.WithDelayedExecution

	mu    sync.Mutex
	mods  map[string]*moduleRunState
	ready []string      // modules to run, in request order
	wake  chan struct{} // signals workers that ready grew
}

// moduleRunState is one module's bookkeeping in the runner.
type moduleRunState struct {
	pending  bool // a run is wanted
	queued   bool // in ready
	running  bool
	stopped  bool      // cancel stopped the running attempt: no retry
	failures int       // consecutive failed attempts: the streak Events report
	since    time.Time // when the first of failures ended
	// steps is the backoff exponent: failures since the last success or
	// since the module's inputs last changed (retryNow).
	steps int
	// urgent is set when the inputs changed while an attempt ran: if that
	// attempt fails, the next one starts at once, since it may have read
	// the old inputs.
	urgent bool
	retry  clock.Timer // backoff before the next attempt after a failure
	// retryGen tells a backoff timer that fires after it was stopped (its
	// callback waited for mu) from the current one.
	retryGen int
	cancel   context.CancelFunc
	// waiters are called once with the result of the next attempt to
	// start after they were added; running holds those of the attempt in
	// progress.
	waiters        []func(error)
	runningWaiters []func(error)
	idle           chan struct{} // closed when a running attempt ends; for cancel
}

func newModuleRunner(workers int, run runFunc, backoff queue.Backoff, clk clock.WithDelayedExecution) *moduleRunner {
	return &moduleRunner{workers: max(workers, 1), run: run, backoff: backoff, clock: clk, mods: map[string]*moduleRunState{}, wake: make(chan struct{}, 1)}
}

func (r *moduleRunner) state(name string) *moduleRunState {
	st, ok := r.mods[name]
	if !ok {
		st = &moduleRunState{}
		r.mods[name] = st
	}
	return st
}

// request asks for a run of the module. done, when not nil, is called with
// the result of the next attempt that starts after the request, so it sees
// the values of this moment. A run already pending
// absorbs the request; a module in backoff runs when its backoff ends.
func (r *moduleRunner) request(name string, done func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(name)
	st.pending = true
	if done != nil {
		st.waiters = append(st.waiters, done)
	}
	r.enqueue(name, st)
}

// failed counts a failed attempt into the module's streak. Called with mu
// held.
func (r *moduleRunner) failed(st *moduleRunState) {
	st.failures++
	if st.failures == 1 {
		st.since = r.clock.Now()
	}
}

// retryNow asks for a run because the module's inputs changed (its
// ConfigMap section or Enabled key, its values, global values): a fix must
// not wait for a backoff meant for the old inputs. A backoff in progress
// ends at once, a running attempt that fails is followed by another at
// once, and the next backoff starts again from the first delay. Otherwise
// it is request.
func (r *moduleRunner) retryNow(name string, done func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(name)
	st.pending = true
	if done != nil {
		st.waiters = append(st.waiters, done)
	}
	r.skipBackoff(st)
	if st.running {
		st.urgent = true
	}
	r.enqueue(name, st)
}

// retryFailedNow ends the backoff of every module waiting for one, so they
// run again at once; it is for when a cause shared by many failures is
// gone (the API server is back). It returns those modules, sorted.
func (r *moduleRunner) retryFailedNow() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name, st := range r.mods {
		if st.retry == nil {
			continue
		}
		r.skipBackoff(st)
		r.enqueue(name, st)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// skipBackoff stops a backoff in progress and restarts the exponent.
// Called with mu held.
func (r *moduleRunner) skipBackoff(st *moduleRunState) {
	if st.retry != nil {
		st.retry.Stop()
		st.retry = nil
	}
	st.steps = 0
}

// enqueue makes a pending module ready unless it runs, waits in ready, or
// backs off. Called with mu held.
func (r *moduleRunner) enqueue(name string, st *moduleRunState) {
	if !st.pending || st.running || st.queued || st.retry != nil {
		return
	}
	st.queued = true
	r.ready = append(r.ready, name)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// cancel stops a module: its running attempt is cancelled and awaited, its
// pending run and backoff are dropped, and its waiters get errCancelled.
func (r *moduleRunner) cancel(name string) {
	r.mu.Lock()
	st := r.state(name)
	st.pending = false
	if st.retry != nil {
		st.retry.Stop()
		st.retry = nil
	}
	if st.queued {
		st.queued = false
		r.ready = slices.DeleteFunc(r.ready, func(n string) bool { return n == name })
	}
	waiters := slices.Concat(st.waiters, st.runningWaiters)
	st.waiters, st.runningWaiters = nil, nil
	var idle chan struct{}
	if st.running {
		st.stopped = true
		st.cancel()
		idle = st.idle
	}
	st.failures, st.steps, st.urgent = 0, 0, false
	r.mu.Unlock()
	for _, w := range waiters {
		w(errCancelled)
	}
	if idle != nil {
		<-idle
	}
}

// failures returns how often the module failed in a row.
func (r *moduleRunner) failures(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state(name).failures
}

// Run works the pool until ctx ends.
func (r *moduleRunner) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Go(func() { r.work(ctx) })
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.mods {
		if st.retry != nil {
			st.retry.Stop()
		}
	}
	return nil
}

func (r *moduleRunner) work(ctx context.Context) {
	for {
		name, st, runCtx := r.take(ctx)
		if name == "" {
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
				continue
			}
		}
		again, err := r.run(runCtx, name)
		r.finish(ctx, name, st, again, err)
	}
}

// take pops the next ready module and marks it running.
func (r *moduleRunner) take(ctx context.Context) (string, *moduleRunState, context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ready) == 0 || ctx.Err() != nil {
		return "", nil, nil
	}
	name := r.ready[0]
	r.ready = r.ready[1:]
	st := r.mods[name]
	st.queued, st.pending, st.running = false, false, true
	st.runningWaiters, st.waiters = st.waiters, nil
	st.idle = make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	st.cancel = cancel
	if len(r.ready) > 0 {
		select { // let another worker pick the rest
		case r.wake <- struct{}{}:
		default:
		}
	}
	return name, st, runCtx
}

// finish records an attempt's result: waiters learn it, a failure backs
// off before the module runs again, a success runs again only if asked.
func (r *moduleRunner) finish(ctx context.Context, name string, st *moduleRunState, again bool, err error) {
	r.mu.Lock()
	st.cancel()
	st.running = false
	close(st.idle)
	waiters := st.runningWaiters
	st.runningWaiters = nil
	cancelled := ctx.Err() != nil || st.stopped
	urgent := st.urgent
	st.stopped, st.urgent = false, false
	switch {
	case cancelled:
	case err != nil && urgent:
		// The inputs changed during the attempt: try them now.
		r.failed(st)
		st.pending = true
		r.enqueue(name, st)
	case err != nil:
		r.failed(st)
		st.steps++
		st.pending = true
		st.retryGen++
		gen := st.retryGen
		st.retry = r.clock.AfterFunc(r.backoff(st.steps), func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if gen != st.retryGen || st.retry == nil {
				return // stopped too late: skipped or cancelled since
			}
			st.retry = nil
			r.enqueue(name, st)
		})
	default:
		st.failures, st.steps = 0, 0
		if again {
			st.pending = true
		}
		r.enqueue(name, st)
	}
	r.mu.Unlock()
	for _, w := range waiters {
		w(err)
	}
}
