package monitor

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// monitor watches the objects of one binding. Its goroutines are started
// by run, which Monitors.Run calls in a goroutine it owns; everything the
// run creates is stopped before done is closed.
type monitor struct {
	id      string
	spec    monitorSpec
	dynamic dynamic.Interface
	out     chan<- Event
	log     *slog.Logger
	state   *monitorState

	// stop is closed by halt to end the run.
	stop     chan struct{}
	stopOnce sync.Once
	// done is closed when every goroutine of the monitor has exited, or by
	// Start when the monitor never reached Run.
	done chan struct{}
	// ready receives the outcome of the initial sync exactly once.
	ready chan monitorReady
}

// monitorReady is the outcome of a monitor's initial sync.
type monitorReady struct {
	objects []hook.FilteredObject
	err     error
}

func newMonitor(id string, spec monitorSpec, dyn dynamic.Interface, out chan<- Event, log *slog.Logger) *monitor {
	return &monitor{
		id:      id,
		spec:    spec,
		dynamic: dyn,
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
	mon.stopOnce.Do(func() { close(mon.stop) })
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

// run starts the informers, reports the initial sync on ready, then keeps
// watching until ctx is done or the monitor is halted.
func (mon *monitor) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	r := &monitorRun{groups: make(map[string]*monitorGroup), errs: make(chan error, 1)}
	var helpers sync.WaitGroup
	defer close(mon.done)
	defer helpers.Wait()
	defer r.stop()
	defer cancel()
	helpers.Go(func() {
		select {
		case <-mon.stop:
			cancel()
		case <-ctx.Done():
		}
	})
	helpers.Go(func() { mon.state.deliver(ctx, mon.out) })

	if mon.spec.followNamespaces {
		mon.followNamespaces(ctx, r)
		return
	}
	ready := mon.syncGroups(ctx, r, mon.spec.namespaces)
	mon.ready <- ready
	if ready.err == nil {
		<-ctx.Done()
	}
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

// monitorGroup is the informers of one namespace, stopped together.
type monitorGroup struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// synced has a channel per informer, closed once its handler has seen
	// the initial list.
	synced []<-chan struct{}
}

// stop stops the group's informers and waits until their handlers have
// returned.
func (g *monitorGroup) stop() {
	g.cancel()
	g.wg.Wait()
}

// startGroup starts the binding's informers in namespace ns. With
// emitInitial the objects they list first are Added events (the namespace
// started to match); otherwise they belong to Start's list. Until an
// informer has synced its list failures go to errs, or to the log when
// errs is nil.
func (mon *monitor) startGroup(ctx context.Context, ns string, emitInitial bool, errs chan<- error) *monitorGroup {
	ctx, cancel := context.WithCancel(ctx)
	g := &monitorGroup{cancel: cancel}
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { mon.state.apply(hook.Added, obj, emitInitial || !initial) },
		UpdateFunc: func(_, obj any) { mon.state.apply(hook.Modified, obj, true) },
		DeleteFunc: func(obj any) { mon.state.apply(hook.Deleted, obj, true) },
	}
	transform := func(obj any) (any, error) { return mon.spec.filter.transform(ctx, obj), nil }
	for _, name := range mon.spec.names {
		inf := newInformer(mon.dynamic, mon.spec.resource.GVR, ns, mon.spec.listOptions(name))
		g.synced = append(g.synced, mon.startInformer(ctx, &g.wg, inf, transform, handler, errs))
	}
	return g
}

// startInformer runs inf in wg until ctx is done. It returns a channel
// closed when handler has seen the informer's initial list.
func (mon *monitor) startInformer(ctx context.Context, wg *sync.WaitGroup, inf cache.SharedIndexInformer,
	transform cache.TransformFunc, handler cache.ResourceEventHandler, errs chan<- error,
) <-chan struct{} {
	var reg cache.ResourceEventHandlerRegistration
	// Neither setter fails on an informer that has not started.
	_ = inf.SetTransform(transform)
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		mon.watchFailed(reg, errs, err)
	})
	reg, _ = inf.AddEventHandler(handler)
	wg.Go(func() { inf.RunWithContext(ctx) })
	return reg.HasSyncedChecker().Done()
}

// watchFailed reports a failed list or watch: before the informer synced to
// errs (failing Start) when there is one, else to the log. client-go
// retries either way.
func (mon *monitor) watchFailed(reg cache.ResourceEventHandlerRegistration, errs chan<- error, err error) {
	if errs != nil && !reg.HasSynced() {
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

// newInformer returns an informer of resource gvr in namespace ns ("" for all)
// with opts' selectors. client-go's filtered dynamic informer lists and
// watches with WatchList semantics, like the shared informer factories.
func newInformer(dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) cache.SharedIndexInformer {
	selectors := func(o *metav1.ListOptions) {
		o.LabelSelector, o.FieldSelector = opts.LabelSelector, opts.FieldSelector
	}
	return dynamicinformer.NewFilteredDynamicInformer(dyn, gvr, ns, 0, cache.Indexers{}, selectors).Informer()
}
