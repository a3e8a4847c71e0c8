// Package runner runs named units of work (the operator's module runs) on a
// bounded pool of workers, apart from any queue: runs of one name never
// overlap, requests coalesce into at most one pending run, and a failing
// name retries with its own backoff without holding up the others. An
// attempt that waits (for its objects to be ready) parks: it holds no
// worker until what it waits for is there.
package runner

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

// ErrCancelled is what waiters of a module's run learn when the module was
// cancelled (disabled) before the run finished.
var ErrCancelled = errors.New("module run cancelled")

// RunFunc runs a step of a module's attempt: the first step of each
// attempt, then each Result.Then.
type RunFunc func(ctx context.Context, module string) (Result, error)

// Result is what a successful step of an attempt asks for next.
type Result struct {
	// Again asks for another attempt at once once this one is over (the
	// module's afterHelm hooks changed its values).
	Again bool
	// Await, when not nil, parks the attempt: its worker is free at once,
	// and Await runs on a goroutine of its own with the attempt's context
	// (cancelled when the module is cancelled or the pool stops). When it
	// returns nil, Then runs on a worker as the rest of the same attempt,
	// ahead of attempts that have not started; when it returns an error,
	// the attempt failed with it. The module counts as running
	// throughout: requests made meanwhile wait for the attempt's end, and
	// Superseded reports changed inputs to Await.
	Await func(ctx context.Context) error
	// Then is the attempt's next step after Await; nil ends the attempt
	// when Await succeeds.
	Then RunFunc
}

// Pool runs modules on a bounded pool of workers, apart from the
// operator's queues, so that a failing module retries with backoff without
// holding up other modules or the main queue. Runs of one module never
// overlap, and at most one more run is pending per module. The runner owns
// its state; its methods are safe for concurrent use.
type Pool struct {
	workers int
	run     RunFunc
	backoff queue.Backoff
	clock   clock.WithDelayedExecution

	// onAttemptEnd, when set, hears a module's name once an attempt's
	// end is recorded (see OnAttemptEnd).
	onAttemptEnd func(name string)

	mu    sync.Mutex
	mods  map[string]*moduleState
	ready []string      // modules to run, in request order
	wake  chan struct{} // signals workers that ready grew
}

// moduleState is one module's bookkeeping in the runner.
type moduleState struct {
	pending bool // a run is wanted
	queued  bool // in ready
	running bool
	// parked is set while a running attempt's Await runs: no worker
	// holds it. then is its next step once Await succeeded, queued in
	// ready ahead of new attempts.
	parked   bool
	then     RunFunc
	stopped  bool      // cancel stopped the running attempt: no retry
	failures int       // consecutive failed attempts: the streak Events report
	since    time.Time // when the first of failures ended
	// steps is the backoff exponent: failures since the last success or
	// since the module's inputs last changed (RetryNow).
	steps int
	// urgent is set when the inputs changed while an attempt ran: if that
	// attempt fails, the next one starts at once, since it may have read
	// the old inputs.
	urgent bool
	retry  clock.Timer // backoff before the next attempt after a failure
	// retryAt is when retry fires; meaningless while retry is nil.
	retryAt time.Time
	// retryGen tells a backoff timer that fires after it was stopped (its
	// callback waited for mu) from the current one.
	retryGen int
	runCtx   context.Context // the running attempt's, for its later steps
	cancel   context.CancelFunc
	// waiters are called once with the result of the next attempt to
	// start after they were added; running holds those of the attempt in
	// progress.
	waiters        []func(error)
	runningWaiters []func(error)
	// parkWaiters are called once when the next attempt to start after
	// they were added parks (its Await begins); running holds those of
	// the attempt in progress. An attempt that never parks drops them.
	parkWaiters        []func()
	runningParkWaiters []func()
	idle               chan struct{} // closed when a running attempt ends; for cancel
	// superseded is closed when RetryNow asks for a run while an attempt
	// runs: the attempt may stop waiting for what the old inputs deployed.
	superseded chan struct{}
}

// New returns a pool of workers (at least one) that runs modules with run
// and waits backoff before the next attempt after a failure.
func New(workers int, run RunFunc, backoff queue.Backoff, clk clock.WithDelayedExecution) *Pool {
	return &Pool{workers: max(workers, 1), run: run, backoff: backoff, clock: clk, mods: map[string]*moduleState{}, wake: make(chan struct{}, 1)}
}

func (r *Pool) state(name string) *moduleState {
	st, ok := r.mods[name]
	if !ok {
		st = &moduleState{}
		r.mods[name] = st
	}
	return st
}

// Request asks for a run of the module. done, when not nil, is called with
// the result of the next attempt that starts after the request, so it sees
// the values of this moment. A run already pending
// absorbs the request; a module in backoff runs when its backoff ends.
func (r *Pool) Request(name string, done func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueue(name, r.want(name, done))
}

// want marks a run of the module pending, with done waiting for it.
// Called with mu held.
func (r *Pool) want(name string, done func(error)) *moduleState {
	st := r.state(name)
	st.pending = true
	if done != nil {
		st.waiters = append(st.waiters, done)
	}
	return st
}

// Notify calls done with the result of the module's next attempt to
// start, without asking for one: for following a module that retries on
// its own. done may never be called when no attempt comes.
func (r *Pool) Notify(name string, done func(error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(name)
	st.waiters = append(st.waiters, done)
}

// failed counts a failed attempt into the module's streak. Called with mu
// held.
func (r *Pool) failed(st *moduleState) {
	st.failures++
	if st.failures == 1 {
		st.since = r.clock.Now()
	}
}

// RetryNow asks for a run because the module's inputs changed (its
// ConfigMap section or Enabled key, its values, global values): a fix must
// not wait for a backoff meant for the old inputs. A backoff in progress
// ends at once, a running attempt that fails is followed by another at
// once, and the next backoff starts again from the first delay. Otherwise
// it is Request.
func (r *Pool) RetryNow(name string, done func(error)) {
	r.RetryNowFollowing(name, done, nil)
}

// RetryNowFollowing is RetryNow that also calls parked, when not nil, once
// the attempt it asks for parks: its first step is over (a module's release
// is applied) and it waits without a worker. done still hears the
// attempt's end.
func (r *Pool) RetryNowFollowing(name string, done func(error), parked func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.want(name, done)
	if parked != nil {
		st.parkWaiters = append(st.parkWaiters, parked)
	}
	r.skipBackoff(st)
	if st.running {
		select {
		case <-st.superseded:
		default:
			close(st.superseded)
		}
		st.urgent = true
	}
	r.enqueue(name, st)
}

// RetryFailedNow ends the backoff of every module waiting for one, so they
// run again at once; it is for when a cause shared by many failures is
// gone (the API server is back). It returns those modules, sorted.
func (r *Pool) RetryFailedNow() []string {
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
func (r *Pool) skipBackoff(st *moduleState) {
	if st.retry != nil {
		st.retry.Stop()
		st.retry = nil
	}
	st.steps = 0
}

// enqueue makes a pending module ready unless it runs, waits in ready, or
// backs off. Called with mu held.
func (r *Pool) enqueue(name string, st *moduleState) {
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

// Cancel stops a module: its running attempt is cancelled and awaited, its
// pending run and backoff are dropped, and its waiters get ErrCancelled.
func (r *Pool) Cancel(name string) {
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
	st.parkWaiters, st.runningParkWaiters = nil, nil
	var idle chan struct{}
	queuedStep := false
	if st.running {
		st.stopped = true
		st.cancel()
		idle = st.idle
		if st.then != nil {
			// Its next step waits for a worker: no one else ends it.
			st.then, queuedStep = nil, true
			r.ready = slices.DeleteFunc(r.ready, func(n string) bool { return n == name })
		}
	}
	st.failures, st.steps, st.urgent = 0, 0, false
	r.mu.Unlock()
	for _, w := range waiters {
		w(ErrCancelled)
	}
	if queuedStep {
		r.finish(false, name, st, false, ErrCancelled)
	}
	if idle != nil {
		<-idle
	}
}

// Failures returns how often the module failed in a row.
func (r *Pool) Failures(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state(name).failures
}

// FailingSince returns when a module's current streak of failures began;
// zero when its last run succeeded.
func (r *Pool) FailingSince(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.state(name); st.failures > 0 {
		return st.since
	}
	return time.Time{}
}

// BackingOff reports whether the module waits for its backoff after a
// failure.
func (r *Pool) BackingOff(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state(name).retry != nil
}

// Superseded returns a channel that is closed when RetryNow asks for a run
// of the module (its inputs changed) while its attempt runs; nil when no
// attempt runs. Only the attempt itself should ask.
func (r *Pool) Superseded(name string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.state(name); st.running {
		return st.superseded
	}
	return nil
}

// Waiting returns the modules with a run requested and not started yet, in
// the order they will start.
func (r *Pool) Waiting() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(r.ready), func(n string) bool { return r.mods[n].running })
}

// Parked returns the modules whose attempt waits without a worker (its
// Await runs), sorted.
func (r *Pool) Parked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name, st := range r.mods {
		if st.parked {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Run works the pool until ctx ends.
func (r *Pool) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Go(func() { r.work(ctx, &wg) })
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

// work runs steps of attempts until ctx ends. A parked attempt's Await
// runs on a goroutine of its own, counted in wg.
func (r *Pool) work(ctx context.Context, wg *sync.WaitGroup) {
	for {
		name, st, runCtx, step := r.take(ctx)
		if name == "" {
			select {
			case <-ctx.Done():
				return
			case <-r.wake:
				continue
			}
		}
		res, err := step(runCtx, name)
		if err != nil || res.Await == nil {
			r.finish(ctx.Err() != nil, name, st, res.Again, err)
			continue
		}
		r.mu.Lock()
		st.parked = true
		parked := st.runningParkWaiters
		st.runningParkWaiters = nil
		r.mu.Unlock()
		for _, p := range parked {
			p()
		}
		wg.Go(func() { r.resume(ctx, name, st, res, res.Await(runCtx)) })
	}
}

// resume ends a parked attempt's wait: with awaitErr, or without a next
// step, the attempt is over; else its next step goes ahead of the
// attempts that have not started.
func (r *Pool) resume(ctx context.Context, name string, st *moduleState, res Result, awaitErr error) {
	r.mu.Lock()
	st.parked = false
	if awaitErr != nil || res.Then == nil || st.stopped || ctx.Err() != nil {
		r.mu.Unlock()
		r.finish(ctx.Err() != nil, name, st, res.Again, awaitErr)
		return
	}
	st.then = res.Then
	r.ready = slices.Insert(r.ready, 0, name)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	r.mu.Unlock()
}

// take pops the next ready module and marks it running, or pops the next
// step of a running attempt.
func (r *Pool) take(ctx context.Context) (string, *moduleState, context.Context, RunFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ready) == 0 || ctx.Err() != nil {
		return "", nil, nil, nil
	}
	name := r.ready[0]
	r.ready = r.ready[1:]
	st := r.mods[name]
	r.wakeOthers()
	if step := st.then; step != nil {
		st.then = nil
		return name, st, st.runCtx, step
	}
	st.queued, st.pending, st.running = false, false, true
	st.runningWaiters, st.waiters = st.waiters, nil
	st.runningParkWaiters, st.parkWaiters = st.parkWaiters, nil
	st.idle = make(chan struct{})
	st.superseded = make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	st.runCtx, st.cancel = runCtx, cancel
	return name, st, runCtx, r.run
}

// wakeOthers lets another worker pick what is left in ready. Called with
// mu held.
func (r *Pool) wakeOthers() {
	if len(r.ready) > 0 {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// finish records an attempt's result: waiters learn it, a failure backs
// off before the module runs again, a success runs again only if asked.
func (r *Pool) finish(poolStopped bool, name string, st *moduleState, again bool, err error) {
	r.mu.Lock()
	st.cancel()
	st.running, st.runCtx = false, nil
	close(st.idle)
	waiters := st.runningWaiters
	st.runningWaiters, st.runningParkWaiters = nil, nil
	cancelled := poolStopped || st.stopped
	urgent := st.urgent
	st.stopped, st.urgent = false, false
	switch {
	case cancelled:
	case err != nil && queue.IsTerminal(err):
		// Retrying cannot fix it: no backoff, no retry; a request (new
		// inputs) runs it again.
		r.failed(st)
		st.steps = 0
		r.enqueue(name, st)
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
		delay := r.backoff(st.steps)
		st.retryAt = r.clock.Now().Add(delay)
		st.retry = r.clock.AfterFunc(delay, func() {
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
	if !cancelled && r.onAttemptEnd != nil {
		r.onAttemptEnd(name)
	}
}
