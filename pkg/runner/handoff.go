package runner

import "context"

// Park runs wait, a wait for something outside the process (a hook's
// process to exit, a rate limit), without holding a worker when ctx is
// the context of a step the pool runs (or one derived from it): the
// step's worker goes back to the pool while wait runs, and once wait
// returns the step goes on as soon as a worker is free for it, ahead of
// attempts that have not started. The module's attempt counts as running
// throughout, so runs of one module still never overlap and requests made
// meanwhile wait for its end. With any other context (a binding queue's,
// a webhook's), within another Park, or when ParkedStepsPerWorker steps a
// worker already wait with their worker handed back, wait runs in place.
//
// Park returns wait's error. It is called from the step's own goroutine.
// When the attempt's context ends before a worker is free (the pool stops
// or the module is cancelled), the step goes on without one; it ends soon
// on its cancelled context, and its goroutine then leaves the pool.
func Park(ctx context.Context, wait func(context.Context) error) error {
	h, _ := ctx.Value(holdKey{}).(*hold)
	if h == nil || !h.release() {
		return wait(ctx)
	}
	err := wait(ctx)
	h.reacquire()
	return err
}

// holdKey is the context key of a step's hold on its worker.
type holdKey struct{}

// hold is a step's hold on the worker that runs it, in the context the
// step's RunFunc gets. Its fields are under the pool's mu.
type hold struct {
	pool *Pool
	name string
	st   *moduleState
	// done is the attempt's context's: a step whose attempt ended waits
	// for no worker.
	done <-chan struct{}
	// released is set while the step waits in Park, its worker handed
	// back; detached once it went on without one, for good.
	released, detached bool
	// ended is set once the step returned: Park then runs in place.
	ended bool
}

// release hands the step's worker back: another worker starts in its
// place. It reports false when the step holds no worker to hand back.
func (h *hold) release() bool {
	r := h.pool
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.ended || h.released || h.detached || r.stepsAway >= r.maxStepsAway {
		return false
	}
	h.released = true
	r.stepsAway++
	r.spawn()
	return true
}

// reacquire waits until a worker hands its place to the step (handOff),
// ahead of attempts that have not started, or until the attempt's
// context ends: then the step goes on without a worker.
func (h *hold) reacquire() {
	r := h.pool
	back := make(chan struct{})
	r.mu.Lock()
	r.stepsAway--
	h.st.resumer = back
	r.mu.Unlock()
	r.queue.Add(item{name: h.name, resume: true})
	select {
	case <-back:
	case <-h.done:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-back: // handed over, maybe just as the attempt ended
		h.released = false
		return
	default:
	}
	h.st.resumer = nil
	h.detached = true
}

// handOff gives the worker that took a module's resume item to the step
// of that module waiting in Park: it reports true when the worker's loop
// is to end, the step's goroutine working on in its place; false when no
// step waits (it went on without a worker).
func (r *Pool) handOff(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.mods[name]
	if st == nil || st.resumer == nil {
		return false
	}
	close(st.resumer)
	st.resumer = nil
	return true
}
