package heal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

const (
	// retryMin and retryMax bound the backoff between attempts to
	// resolve kinds the resolver did not know.
	retryMin = time.Second
	retryMax = 5 * time.Minute
)

// healRun is what Run has started; Run's goroutine owns it.
type healRun struct {
	informers map[informerKey]*healInformer
	// unresolved are the watched kinds the resolver did not know at the last
	// reconciliation. Each is logged when it starts failing.
	unresolved map[schema.GroupKind]bool
	// retry fires the next attempt to resolve them, after backoff; nil
	// while every kind is resolved.
	retry   clock.Timer
	backoff time.Duration
	wg      sync.WaitGroup
}

// retryC is the channel of the retry timer, nil (never ready) without one.
func (run *healRun) retryC() <-chan time.Time {
	if run.retry == nil {
		return nil
	}
	return run.retry.C()
}

// scheduleRetry arms the retry timer while kinds are unresolved: doubling
// the backoff when the retry itself (fired) failed again, and keeping an
// armed timer otherwise.
func (run *healRun) scheduleRetry(clk clock.Clock, fired bool) {
	if len(run.unresolved) == 0 {
		if run.retry != nil {
			run.retry.Stop()
		}
		run.retry, run.backoff = nil, 0
		return
	}
	if fired {
		if run.retry != nil {
			run.retry.Stop() // it has fired; stopping it is a no-op
		}
		run.retry, run.backoff = nil, min(2*run.backoff, retryMax)
	}
	if run.retry == nil {
		run.backoff = max(run.backoff, retryMin)
		run.retry = clk.NewTimer(run.backoff)
	}
}

// informerKey identifies an informer: a resource in a namespace, or in
// none for cluster-scoped resources.
type informerKey struct {
	resource  schema.GroupResource
	namespace string
}

// healResource is a kind resolved to the resource its informer watches.
type healResource struct {
	gvr        schema.GroupVersionResource
	kind       schema.GroupKind
	namespaced bool
}

// healInformer is one running informer.
type healInformer struct {
	cancel context.CancelFunc
	// done is closed when the informer and its handler have returned.
	done chan struct{}
	// synced is closed once the handler has seen the initial list.
	synced <-chan struct{}
}

// Run owns the informers. It starts and stops them as Watch and Forget
// change the watched objects, and returns nil when ctx is done, after every
// informer has stopped. Call it once.
func (w *Watcher) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running {
		w.mu.Unlock()
		return errors.New("heal watcher is already running")
	}
	w.running = true
	w.mu.Unlock()

	run := &healRun{informers: make(map[informerKey]*healInformer), unresolved: make(map[schema.GroupKind]bool)}
	defer close(w.finished)
	defer run.wg.Wait()
	defer func() {
		if run.retry != nil {
			run.retry.Stop()
		}
	}()
	w.reconcile(ctx, run, false)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.changed:
			w.reconcile(ctx, run, false)
		case <-run.retryC():
			w.reconcile(ctx, run, true)
		case reply := <-w.syncs:
			w.reconcile(ctx, run, false)
			informers := make([]*healInformer, 0, len(run.informers))
			for _, inf := range run.informers {
				informers = append(informers, inf)
			}
			reply <- informers
		}
	}
}

// WaitSynced waits until the informers for every object given to Watch
// before the call have listed them, so that a deletion from then on is
// seen. Kinds the resolver cannot resolve are not waited for. It blocks until
// Run runs, and fails with ctx's error or ErrStopped.
func (w *Watcher) WaitSynced(ctx context.Context) error {
	reply := make(chan []*healInformer, 1)
	select {
	case w.syncs <- reply:
	case <-w.finished:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, inf := range <-reply {
		select {
		case <-inf.synced:
		case <-inf.done: // stopped by a later Forget or Watch
		case <-w.finished:
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// reconcile starts an informer for every resource and namespace the watched
// objects need and stops those no longer needed; retry tells that the retry
// timer called it.
func (w *Watcher) reconcile(ctx context.Context, run *healRun, retry bool) {
	want := make(map[informerKey]healResource)
	resolved := make(map[schema.GroupKind]*healResource)
	for target := range w.targets() {
		res, seen := resolved[target.kind]
		if !seen {
			res = w.resolve(ctx, run, target.kind)
			resolved[target.kind] = res
		}
		if res == nil {
			continue
		}
		key := informerKey{resource: res.gvr.GroupResource()}
		if res.namespaced {
			key.namespace = target.namespace
		}
		want[key] = *res
	}
	for kind := range run.unresolved {
		if _, ok := resolved[kind]; !ok {
			delete(run.unresolved, kind) // no longer watched
		}
	}
	for key, inf := range run.informers {
		if _, ok := want[key]; !ok {
			w.stores.remove(key)
			inf.cancel()
			<-inf.done
			delete(run.informers, key)
		}
	}
	for key, res := range want {
		if _, ok := run.informers[key]; !ok {
			run.informers[key] = w.startInformer(ctx, &run.wg, res, key)
		}
	}
	run.scheduleRetry(w.clock, retry)
}

// resolve maps kind to its resource in the preferred version, or returns
// nil after logging why not.
func (w *Watcher) resolve(ctx context.Context, run *healRun, kind schema.GroupKind) *healResource {
	res, err := w.kinds.Resolve(ctx, kind.WithVersion(""))
	if err != nil {
		if !run.unresolved[kind] {
			run.unresolved[kind] = true
			w.log.Warn("kind not watched", slog.String(logkey.Kind, kind.String()), logkey.Err(err))
		}
		return nil
	}
	delete(run.unresolved, kind)
	return &healResource{gvr: res.GVR, kind: kind, namespaced: res.Namespaced}
}

// startInformer runs an informer for res in key's namespace ("" for all)
// in wg until ctx is done or the informer is cancelled, and serves its
// store to ResourceVersion.
func (w *Watcher) startInformer(ctx context.Context, wg *sync.WaitGroup, res healResource, key informerKey) *healInformer {
	namespace := key.namespace
	ctx, cancel := context.WithCancel(ctx)
	selectOurs := func(o *metav1.ListOptions) { o.LabelSelector = w.selector }
	inf := metadatainformer.NewFilteredMetadataInformer(w.metadata, res.gvr, namespace, 0, cache.Indexers{}, selectOurs).Informer()
	// Neither setter fails on an informer that has not started.
	if w.changes != nil {
		_ = inf.SetTransform(driftSlim)
	} else {
		_ = inf.SetTransform(healSlim)
	}
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.watchFailed(res, namespace, err)
	})
	handler := cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) { w.onDelete(ctx, res, obj) },
	}
	if w.changes != nil {
		handler.UpdateFunc = func(old, obj any) { w.onUpdate(ctx, res, old, obj) }
		// Objects the informer lists or sees created: a change made
		// between a module's deploy and the informer's first list shows
		// up as an addition only.
		handler.AddFunc = func(obj any) { w.onUpdate(ctx, res, nil, obj) }
	}
	reg, _ := inf.AddEventHandler(handler)
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		inf.RunWithContext(ctx)
	})
	synced := reg.HasSyncedChecker().Done()
	w.stores.add(key, inf.GetStore(), synced)
	return &healInformer{cancel: cancel, done: done, synced: synced}
}

// onDelete sends the events for a deleted object, giving up when the
// informer stops.
func (w *Watcher) onDelete(ctx context.Context, res healResource, obj any) {
	namespace, name, ok := objectKey(obj)
	if !ok {
		return
	}
	for _, ev := range w.deleted(res.kind, res.namespaced, namespace, name) {
		w.log.Debug("managed object deleted",
			slog.String(logkey.Module, ev.Module), slog.String(logkey.Kind, ev.Object.Kind), slog.String(logkey.Namespace, namespace), slog.String(logkey.Name, name))
		select {
		case w.events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// watchFailed logs a failed list or watch; client-go retries either way.
func (w *Watcher) watchFailed(res healResource, namespace string, err error) {
	if errors.Is(err, io.EOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		w.log.Debug("watch restarted", slog.String(logkey.Kind, res.kind.String()), slog.String(logkey.Namespace, namespace), logkey.Err(err))
		return
	}
	w.log.Warn("watch failed", slog.String(logkey.Kind, res.kind.String()), slog.String(logkey.Namespace, namespace), logkey.Err(err))
}

// objectKey returns the namespace and name of a deleted object, also
// when the informer missed the deletion and found the object gone on a
// relist.
func objectKey(obj any) (namespace, name string, ok bool) {
	if gone, isGone := obj.(cache.DeletedFinalStateUnknown); isGone {
		namespace, name, err := cache.SplitMetaNamespaceKey(gone.Key)
		return namespace, name, err == nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", false
	}
	return m.GetNamespace(), m.GetName(), true
}

// healSlim keeps only what the informer needs of an object's metadata:
// its identity and resource version, no labels, annotations or managed
// fields.
func healSlim(obj any) (any, error) { return slimMetadata(obj) }

// slimMetadata keeps of an object's metadata its identity, its resource
// version and the labels named by keep; anything but metadata passes.
func slimMetadata(obj any, keep ...string) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	slim := &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            m.Name,
			Namespace:       m.Namespace,
			UID:             m.UID,
			ResourceVersion: m.ResourceVersion,
		},
	}
	if len(keep) > 0 {
		slim.Labels = make(map[string]string, len(keep))
		for _, key := range keep {
			slim.Labels[key] = m.Labels[key]
		}
	}
	return slim, nil
}
