package monitor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// monitor watches the objects of one binding. Its goroutines are started
// by run, which Monitors.Run calls in a goroutine it owns; everything the
// run creates is stopped, and its leases on shared informers released,
// before done is closed.
type monitor struct {
	id      string
	spec    monitorSpec
	watches *informerPool
	out     chan<- Event
	log     *slog.Logger
	state   *monitorState

	// stop is closed by halt to end the run; halt also calls cancel, which
	// run sets (under mu) and which ends the run's context.
	stop     chan struct{}
	stopOnce sync.Once
	mu       sync.Mutex
	cancel   context.CancelFunc
	// done is closed when every goroutine of the monitor has exited, or by
	// Start when the monitor never reached Run.
	done chan struct{}
	// ready receives the outcome of the initial sync exactly once.
	ready chan monitorReady
	// binding is what the monitor was started for, which Start compares
	// before it adopts a snapshot-only monitor.
	binding hook.KubernetesBinding
}

// monitorReady is the outcome of a monitor's initial sync.
type monitorReady struct {
	objects []hook.FilteredObject
	err     error
}

func newMonitor(id string, spec monitorSpec, watches *informerPool, out chan<- Event, log *slog.Logger) *monitor {
	return &monitor{
		id:      id,
		spec:    spec,
		watches: watches,
		out:     out,
		log:     log,
		state:   newMonitorState(id, spec.events, log),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		ready:   make(chan monitorReady, 1),
	}
}

// halt stops the monitor and waits until it has.
func (mon *monitor) halt() {
	mon.stopOnce.Do(func() {
		close(mon.stop)
		mon.mu.Lock()
		cancel := mon.cancel
		mon.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	})
	<-mon.done
}

// monitorRun is what a running monitor has started; its run goroutine owns
// it.
type monitorRun struct {
	// groups are the object informers by namespace ("" for all).
	groups map[string]*monitorGroup
	// namespaces is the namespace informer of a binding that follows
	// namespaces by label; nil otherwise.
	namespaces *monitorGroup
	// errs receives list failures before the initial sync.
	errs chan error
}

func (r *monitorRun) stop() {
	for _, g := range r.groups {
		g.stop()
	}
	if r.namespaces != nil {
		r.namespaces.stop()
	}
}

// run starts the informers and reports the initial sync on ready. The
// watching goes on in the informers' goroutines until ctx is done or the
// monitor is halted; then everything run started is stopped, done is
// closed and finished is called. After the sync, a monitor that watches
// fixed namespaces keeps no goroutine of its own: its teardown waits on
// ctx (context.AfterFunc). One that follows namespaces keeps run's
// goroutine, which reconciles them.
func (mon *monitor) run(ctx context.Context, finished func()) {
	ctx, cancel := context.WithCancel(ctx)
	r := &monitorRun{groups: make(map[string]*monitorGroup), errs: make(chan error, 1)}
	teardown := func() {
		cancel()
		r.stop()
		mon.state.stopDelivery()
		close(mon.done)
		finished()
	}
	mon.mu.Lock()
	mon.cancel = cancel
	mon.mu.Unlock()
	select {
	case <-mon.stop: // halted before it ran; halt found no cancel to call
		mon.ready <- monitorReady{err: ErrStopped}
		teardown()
		return
	default:
	}
	mon.state.startDelivery(ctx, mon.out)

	if mon.spec.followNamespaces {
		mon.followNamespaces(ctx, r)
		teardown()
		return
	}
	ready := mon.syncGroups(ctx, r, mon.spec.namespaces)
	mon.ready <- ready
	if ready.err != nil {
		teardown()
		return
	}
	context.AfterFunc(ctx, teardown)
}

// syncGroups starts an informer group for each namespace, waits until all
// have listed, and ends the initial sync.
func (mon *monitor) syncGroups(ctx context.Context, r *monitorRun, namespaces []string) monitorReady {
	var synced []<-chan struct{}
	for _, ns := range namespaces {
		g := mon.startGroup(ctx, ns, false, r.errs)
		r.groups[ns] = g
		synced = append(synced, g.synced...)
	}
	if err := waitSynced(ctx, r.errs, synced); err != nil {
		return monitorReady{err: err}
	}
	objects, err := mon.state.markSynced()
	return monitorReady{objects: objects, err: err}
}

// waitSynced waits until every channel in synced is closed. A failed
// list or the end of ctx ends the wait early.
func waitSynced(ctx context.Context, errs <-chan error, synced []<-chan struct{}) error {
	for _, done := range synced {
		select {
		case <-done:
		case err := <-errs:
			return err
		case <-ctx.Done():
			return ErrStopped
		}
	}
	return nil
}

// monitorGroup is the monitor's leases on the informers of one namespace,
// released together.
type monitorGroup struct {
	leases []*lease
	// synced has a channel per lease, closed once the monitor has the
	// informer's initial list.
	synced []<-chan struct{}
}

// stop releases the group's leases; the monitor gets no notification from
// them once stop has returned.
func (g *monitorGroup) stop() {
	for _, l := range g.leases {
		l.release()
	}
}

// startGroup joins the binding's informers in namespace ns, starting those
// no other monitor runs. With emitInitial the objects they list first are
// Added events (the namespace started to match); otherwise they belong to
// Start's list. Until the monitor has an informer's initial list, that
// informer's list failures go to errs, or to the log when errs is nil.
func (mon *monitor) startGroup(ctx context.Context, ns string, emitInitial bool, errs chan<- error) *monitorGroup {
	g := &monitorGroup{}
	c := &objectConsumer{mon: mon, emitInitial: emitInitial, errs: errs}
	for _, name := range mon.spec.names {
		opts := mon.spec.listOptions(name)
		key := watchKey{gvr: mon.spec.resource.GVR, namespace: ns, labelSelector: opts.LabelSelector, fieldSelector: opts.FieldSelector}
		l := mon.watches.acquire(ctx, key, c)
		g.leases = append(g.leases, l)
		g.synced = append(g.synced, l.synced())
	}
	return g
}

// objectConsumer hands an informer's objects to a monitor's state, each
// filtered by the monitor's binding.
type objectConsumer struct {
	mon         *monitor
	emitInitial bool
	errs        chan<- error
}

func (c *objectConsumer) transform(ctx context.Context, u *unstructured.Unstructured) any {
	return c.mon.spec.filter.entry(ctx, u)
}

func (c *objectConsumer) notify(ctx context.Context, ev hook.WatchEvent, obj any, initial bool) {
	if n, ok := obj.(*watchNote); ok {
		obj = c.mon.spec.filter.sharedEntry(ctx, n)
	}
	c.mon.state.apply(ev, obj, ev != hook.Added || c.emitInitial || !initial)
}

func (c *objectConsumer) watchFailed(synced syncChecker, err error) {
	c.mon.watchFailed(synced, c.errs, err)
}

// watchFailed reports a failed list or watch: before the informer synced to
// errs (failing Start) when there is one, else to the log. client-go
// retries either way.
func (mon *monitor) watchFailed(synced syncChecker, errs chan<- error, err error) {
	if errs != nil && !synced.HasSynced() {
		select {
		case errs <- err:
		default: // one failure is enough to fail the sync
		}
		return
	}
	if errors.Is(err, io.EOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		mon.log.Debug("watch restarted", slog.String(logkey.Kind, mon.spec.resource.Kind), logkey.Err(err))
		return
	}
	mon.log.Warn("watch failed", slog.String(logkey.Kind, mon.spec.resource.Kind), logkey.Err(err))
}

// newInformer returns a plain informer of resource gvr in namespace ns
// ("" for all) with the key's selectors: client-go's reflector and FIFO,
// with h called on the FIFO's processing goroutine. A shared informer would
// add a notification buffer of 1,024 entries and three goroutines per watch
// for handlers no watch of ours has (each has one); at a thousand bindings
// that was a fifth of the live heap. The list watcher keeps WatchList
// semantics, as the shared informer factories do. failed gets every list or
// watch request that fails while ctx is live. client-go's own lines about
// the informer (its report of those failures too, and of watches that end
// without one) go to log at debug level through the returned context's
// logger, so each failure is reported once, by failed.
func newInformer(ctx context.Context, dyn dynamic.Interface, key watchKey, h cache.ResourceEventHandler, transform cache.TransformFunc, failed func(error), log *slog.Logger) (cache.Store, cache.Controller, context.Context) {
	ri := dyn.Resource(key.gvr).Namespace(key.namespace)
	selectors := func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = key.labelSelector, key.fieldSelector
	}
	report := func(ctx context.Context, err error) {
		if err != nil && ctx.Err() == nil {
			failed(err)
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			selectors(&o)
			list, err := ri.List(ctx, o)
			report(ctx, err)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			selectors(&o)
			w, err := ri.Watch(ctx, o)
			report(ctx, err)
			return w, err
		},
	}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, dyn),
		ObjectType:    &unstructured.Unstructured{},
		Handler:       h,
		Transform:     transform,
	})
	return store, ctrl, klog.NewContext(ctx, logr.FromSlogHandler(debugHandler{log.Handler()}))
}

// debugHandler hands every record to the handler it wraps at debug level.
type debugHandler struct{ slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.Handler.Enabled(ctx, slog.LevelDebug)
}

// Handle drops what the wrapped handler takes only above debug level: logr
// hands error records over without asking Enabled.
func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	if !d.Handler.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	r.Level = slog.LevelDebug
	return d.Handler.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugHandler{d.Handler.WithAttrs(attrs)}
}

func (d debugHandler) WithGroup(name string) slog.Handler {
	return debugHandler{d.Handler.WithGroup(name)}
}
