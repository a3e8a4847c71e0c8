package modulepub

import "sync"

// RunNowFunc runs a module now, ending its backoff, and calls done with
// the result of that run (*runner.Pool.RetryNow).
type RunNowFunc func(name string, done func(error))

// reconcileSource is a Writer that hears reconcile requests on Module
// objects (*moduleobject.Writer.OnReconcileRequest).
type reconcileSource interface {
	OnReconcileRequest(f func(module, value string))
}

// reconcileRequests are the reconcile requests of the Module objects
// (v1.ReconcileRequestAnnotation); guarded by mu.
type reconcileRequests struct {
	mu      sync.Mutex
	planned bool              // the first plan is made: requests run at once
	waiting map[string]string // module -> the last value heard before then
	handled map[string]string // module -> the last value whose run ended
}

// reconcileRequested runs module name now because its Module object asks
// for it with value: once the run ends (at once for a disabled module,
// which has nothing to run), the object's status.lastHandledReconcileAt
// takes value. Requests heard before the first plan wait for it, since
// which modules are enabled is not decided before. It never blocks.
func (p *Publisher) reconcileRequested(name, value string) {
	if _, ok := p.mods.Module(name); !ok {
		return
	}
	r := &p.requests
	r.mu.Lock()
	if !r.planned {
		r.waiting[name] = value
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	p.reconcile(name, value)
}

// planReconciles runs the requests heard before the first plan.
func (p *Publisher) planReconciles() {
	r := &p.requests
	r.mu.Lock()
	if r.planned {
		r.mu.Unlock()
		return
	}
	r.planned = true
	waiting := r.waiting
	r.waiting = map[string]string{}
	r.mu.Unlock()
	for name, value := range waiting {
		p.reconcile(name, value)
	}
}

func (p *Publisher) reconcile(name, value string) {
	handled := func(error) {
		p.requests.mu.Lock()
		p.requests.handled[name] = value
		p.requests.mu.Unlock()
		p.Publish(name)
	}
	if !p.state(name).Enabled || p.runNow == nil {
		handled(nil)
		return
	}
	p.runNow(name, handled)
}

// handledRequest is the last reconcile request of name whose run ended.
func (p *Publisher) handledRequest(name string) string {
	p.requests.mu.Lock()
	defer p.requests.mu.Unlock()
	return p.requests.handled[name]
}
