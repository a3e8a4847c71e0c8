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

	"k8s.io/client-go/util/workqueue"
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
//
// Its queue is client-go's typed work queue (queue.NewWorkQueue): the
// queue hands a module's item to one worker at a time and holds it
// through the whole attempt, parked steps included, so a request made
// meanwhile is handed out after the attempt's end; it waits each module's
// backoff and counts its steps. The pool keeps what the queue cannot
// know: who waits for which attempt, whether a run is still wanted (an
// item of a cancelled or already served request is dropped when it comes
// out), and until when a module backs off.
type Pool struct {
	workers int
	run     RunFunc
	clock   clock.PassiveClock
	limiter workqueue.TypedRateLimiter[item]
	queue   workqueue.TypedRateLimitingInterface[item]
	order   *order

	// onAttemptEnd, when set, hears a module's name once an attempt's
	// end is recorded (see OnAttemptEnd).
	onAttemptEnd func(name string)
	// spawn starts a worker in place of one a step hands back in Park;
	// set by Run before its workers start.
	spawn func()
	// stepsAway is how many steps wait in Park with their worker handed
	// back, at most maxStepsAway (ParkedStepsPerWorker a worker): past
	// that, a step waits in place on its worker. Under mu.
	stepsAway, maxStepsAway int

	mu   sync.Mutex
	mods map[string]*moduleState
}

// item is what the work queue holds: a module's attempt, the next step of
// its parked attempt, or its step's claim to a worker once the wait in
// Park ended (resume). A step is an item of its own so that it can be
// handed out while the attempt holds the module's item.
type item struct {
	name   string
	step   bool
	resume bool
}

// moduleState is one module's bookkeeping in the runner.
type moduleState struct {
	pending bool // a run is wanted
	running bool
	// parked is set while a running attempt's Await runs: no worker
	// holds it. then is its next step once Await succeeded, queued ahead
	// of new attempts.
	parked   bool
	then     RunFunc
	stopped  bool      // cancel stopped the running attempt: no retry
	failures int       // consecutive failed attempts: the streak Events report
	since    time.Time // when the first of failures ended
	// urgent is set when the inputs changed while an attempt ran: if that
	// attempt fails, the next one starts at once, since it may have read
	// the old inputs.
	urgent bool
	// retryAt is when the backoff after a failure ends; zero when the
	// module does not back off. The backoff's exponent is the work
	// queue's count of the module's retries, forgotten on success and
	// when its inputs change (RetryNow).
	retryAt time.Time
	runCtx  context.Context // the running attempt's, for its later steps
	cancel  context.CancelFunc
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
	// resumer is closed by the worker that hands its place to the
	// attempt's step waiting in Park for one (see handOff).
	resumer chan struct{}
}

// ParkedStepsPerWorker bounds the steps that wait in Park with their
// worker handed back, per worker: with 4 workers, at most 16 hook
// processes of module runs run parked, besides the 4 the workers may run
// in place. A hung hook holds one of those places until its timeout, not
// a worker; once all are taken, a step waits on its worker, so the
// processes a converge starts at once stay bounded.
const ParkedStepsPerWorker = 4

// New returns a pool of workers (at least one) that runs modules with run
// and waits backoff before the next attempt after a failure, on clk.
func New(workers int, run RunFunc, backoff queue.Backoff, clk clock.WithDelayedExecution) *Pool {
	o := &order{}
	limiter := queue.BackoffLimiter[item](backoff)
	return &Pool{
		workers: max(workers, 1), run: run, clock: clk, limiter: limiter, order: o,
		maxStepsAway: max(workers, 1) * ParkedStepsPerWorker,
		queue:        queue.NewWorkQueue[item]("modules", tickerClock(clk), limiter, o),
		mods:         map[string]*moduleState{},
	}
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
	r.want(name, done)
	r.queue.Add(item{name: name})
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
	r.skipBackoff(name, st)
	if st.running {
		select {
		case <-st.superseded:
		default:
			close(st.superseded)
		}
		st.urgent = true
	}
	r.queue.Add(item{name: name})
}

// RetryFailedNow ends the backoff of every module waiting for one, so they
// run again at once; it is for when a cause shared by many failures is
// gone (the API server is back). It returns those modules, sorted.
func (r *Pool) RetryFailedNow() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name, st := range r.mods {
		if st.retryAt.IsZero() {
			continue
		}
		r.skipBackoff(name, st)
		r.queue.Add(item{name: name})
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// skipBackoff ends a backoff in progress and restarts the exponent. The
// work queue still hands the module out when the old backoff would have
// ended; start drops that item unless a run is wanted then. Called with mu
// held.
func (r *Pool) skipBackoff(name string, st *moduleState) {
	st.retryAt = time.Time{}
	r.queue.Forget(item{name: name})
}

// Cancel stops a module: its running attempt is cancelled and awaited, its
// pending run and backoff are dropped, and its waiters get ErrCancelled.
func (r *Pool) Cancel(name string) {
	r.mu.Lock()
	st := r.state(name)
	st.pending = false
	r.skipBackoff(name, st)
	waiters := slices.Concat(st.waiters, st.runningWaiters)
	st.waiters, st.runningWaiters = nil, nil
	st.parkWaiters, st.runningParkWaiters = nil, nil
	var idle chan struct{}
	queuedStep := false
	if st.running {
		st.stopped = true
		st.cancel()
		idle = st.idle
		// A next step waiting for a worker is ended here; its item is
		// dropped when it comes out.
		queuedStep = st.then != nil
		st.then = nil
	}
	st.failures, st.urgent = 0, false
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
	return !r.state(name).retryAt.IsZero()
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
	queued := r.order.attempts()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(queued, func(n string) bool {
		st := r.mods[n]
		return st == nil || !st.pending || st.running || !st.retryAt.IsZero()
	})
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

// Run works the pool until ctx ends, then shuts its queue down and waits
// for its workers and parked attempts. A pool runs once.
func (r *Pool) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	r.spawn = func() { wg.Go(func() { r.work(ctx, &wg) }) }
	for range r.workers {
		r.spawn()
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
	return nil
}

// work runs steps of attempts until the queue shuts down. A parked
// attempt's Await runs on a goroutine of its own, counted in wg. The loop
// also ends when its worker hands its place to a step whose wait in Park
// ended, or when the step it ran went on without a worker: the pool keeps
// its number of workers either way.
func (r *Pool) work(ctx context.Context, wg *sync.WaitGroup) {
	for {
		it, shutdown := r.queue.Get()
		if shutdown {
			return
		}
		switch {
		case it.resume:
			r.queue.Done(it)
			if r.handOff(it.name) {
				return
			}
		case it.step:
			r.queue.Done(it)
			if st, runCtx, step := r.takeStep(ctx, it.name); step != nil && r.step(runCtx, wg, it.name, st, step) {
				return
			}
		default:
			runCtx, cancel := context.WithCancel(ctx)
			st, ok := r.start(runCtx, cancel, it.name)
			if !ok {
				cancel()
				r.queue.Done(it)
				continue
			}
			if r.step(runCtx, wg, it.name, st, r.run) {
				return
			}
		}
	}
}

// step runs one step of an attempt with the attempt's context, runCtx,
// and the step's hold on its worker (for Park); the attempt ends with it
// unless it parks. runCtx ends when the pool stops or the module is
// cancelled (which finish tells by st.stopped). It reports whether the
// step went on without a worker (detached in Park): its goroutine then
// leaves the pool.
func (r *Pool) step(runCtx context.Context, wg *sync.WaitGroup, name string, st *moduleState, step RunFunc) (detached bool) {
	h := &hold{pool: r, name: name, st: st, done: runCtx.Done()}
	res, err := step(context.WithValue(runCtx, holdKey{}, h), name)
	r.mu.Lock()
	h.ended = true
	detached = h.detached
	r.mu.Unlock()
	if err != nil || res.Await == nil {
		r.finish(runCtx.Err() != nil, name, st, res.Again, err)
		return detached
	}
	r.mu.Lock()
	st.parked = true
	parked := st.runningParkWaiters
	st.runningParkWaiters = nil
	r.mu.Unlock()
	for _, p := range parked {
		p()
	}
	wg.Go(func() { r.resume(runCtx, name, st, res, res.Await(runCtx)) })
	return detached
}

// resume ends a parked attempt's wait: with awaitErr, or without a next
// step, the attempt is over; else its next step goes ahead of the
// attempts that have not started. runCtx is the attempt's.
func (r *Pool) resume(runCtx context.Context, name string, st *moduleState, res Result, awaitErr error) {
	r.mu.Lock()
	st.parked = false
	if awaitErr != nil || res.Then == nil || st.stopped || runCtx.Err() != nil {
		r.mu.Unlock()
		r.finish(runCtx.Err() != nil, name, st, res.Again, awaitErr)
		return
	}
	st.then = res.Then
	r.mu.Unlock()
	r.queue.Add(item{name: name, step: true})
}

// takeStep returns the next step of the module's parked attempt; nil when
// there is none (the module was cancelled) or the pool stops.
func (r *Pool) takeStep(ctx context.Context, name string) (*moduleState, context.Context, RunFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.mods[name]
	if st == nil || st.then == nil || ctx.Err() != nil {
		return nil, nil, nil
	}
	step := st.then
	st.then = nil
	return st, st.runCtx, step
}

// start marks the module running for a new attempt the work queue handed
// out, with runCtx (derived from the pool's context) and its cancel as
// the attempt's. It reports false, for the item to be dropped, when no run is
// wanted (cancelled, or served by an attempt since), when the pool stops,
// or when the module's backoff has not ended: then the item comes back
// when it ends.
func (r *Pool) start(runCtx context.Context, cancel context.CancelFunc, name string) (*moduleState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.mods[name]
	if st == nil || !st.pending || st.running || runCtx.Err() != nil {
		return nil, false
	}
	if !st.retryAt.IsZero() {
		if wait := st.retryAt.Sub(r.clock.Now()); wait > 0 {
			r.queue.AddAfter(item{name: name}, wait)
			return nil, false
		}
		st.retryAt = time.Time{}
	}
	st.pending, st.running = false, true
	st.runningWaiters, st.waiters = st.waiters, nil
	st.runningParkWaiters, st.parkWaiters = st.parkWaiters, nil
	st.idle = make(chan struct{})
	st.superseded = make(chan struct{})
	st.runCtx, st.cancel = runCtx, cancel
	return st, true
}

// finish records an attempt's result: waiters learn it, a failure backs
// off before the module runs again, a success runs again only if asked.
// It hands the module's item back to the work queue.
func (r *Pool) finish(poolStopped bool, name string, st *moduleState, again bool, err error) {
	it := item{name: name}
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
		r.queue.Forget(it)
	case err != nil && urgent:
		// The inputs changed during the attempt: try them now.
		r.failed(st)
		st.pending = true
	case err != nil:
		r.failed(st)
		st.pending = true
		// AddRateLimited, with the delay kept for start and NextRetry.
		wait := r.limiter.When(it)
		st.retryAt = r.clock.Now().Add(wait)
		r.queue.AddAfter(it, wait)
	default:
		st.failures = 0
		r.queue.Forget(it)
		if again {
			st.pending = true
		}
	}
	if st.pending && !cancelled && st.retryAt.IsZero() {
		r.queue.Add(it) // a backoff's item comes back when it ends
	}
	r.mu.Unlock()
	r.queue.Done(it)
	for _, w := range waiters {
		w(err)
	}
	if !cancelled && r.onAttemptEnd != nil {
		r.onAttemptEnd(name)
	}
}

// order is the work queue's order of the items it holds: steps of parked
// attempts (and steps back from Park) first, then attempts in request
// order. The work queue calls it under its own lock; mu lets Waiting read
// it.
type order struct {
	mu    sync.Mutex
	steps []item
	items []item
}

// Touch is called for an item added again while queued: its place stays.
func (o *order) Touch(item) {}

func (o *order) Push(it item) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if it.step || it.resume {
		o.steps = append(o.steps, it)
	} else {
		o.items = append(o.items, it)
	}
}

func (o *order) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.steps) + len(o.items)
}

func (o *order) Pop() item {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := &o.items
	if len(o.steps) > 0 {
		from = &o.steps
	}
	it := (*from)[0]
	(*from)[0] = item{}
	*from = (*from)[1:]
	return it
}

// attempts returns the modules whose attempts are queued, in order.
func (o *order) attempts() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	names := make([]string, 0, len(o.items))
	for _, it := range o.items {
		names = append(names, it.name)
	}
	return names
}

// tickerClock returns clk as the work queue's clock, which also makes
// tickers (for its heartbeat). The clocks the operator is given (the real
// one, client-go's fake) make them; for another, tickers come from its
// Tick, which cannot be stopped.
func tickerClock(clk clock.WithDelayedExecution) clock.WithTicker {
	if t, ok := clk.(clock.WithTicker); ok {
		return t
	}
	return tickOnly{clk}
}

type tickOnly struct{ clock.WithDelayedExecution }

func (c tickOnly) NewTicker(d time.Duration) clock.Ticker { return tickOnlyTicker(c.Tick(d)) }

type tickOnlyTicker <-chan time.Time

func (t tickOnlyTicker) C() <-chan time.Time { return t }
func (tickOnlyTicker) Stop()                 {}
