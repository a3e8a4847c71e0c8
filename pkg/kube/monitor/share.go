package monitor

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// watchKey identifies one list-and-watch. Monitors whose informers would
// send the same requests share an informer: one reflector, one watch
// connection, one store and one event handler for all of them.
type watchKey struct {
	gvr           schema.GroupVersionResource
	namespace     string
	labelSelector string
	fieldSelector string
}

// watchObject is the one form a shared informer keeps of an object: its
// identity and its JSON as the API server sent it, from which each
// consumer takes what its binding needs. Consumers keeping full objects
// share raw rather than copy it. Immutable once made.
type watchObject struct {
	namespace, name, resourceVersion string
	raw                              json.RawMessage
	// checksum is over the object without noiseFields, the change test of
	// bindings without jqFilter.
	checksum [sha256.Size]byte
	// err is why the object could not be encoded; raw is nil then.
	err error
}

// GetObjectMeta gives the informer's store and key functions the identity
// and resourceVersion they need; it allocates, so objects stay small.
func (o *watchObject) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: o.namespace, Name: o.name, ResourceVersion: o.resourceVersion}
}

// compactObject is the shared informers' transform: it replaces an object
// by its watchObject and passes anything else (one already made) through.
// It never fails, as client-go drops objects whose transform fails; a
// failure is kept in the watchObject instead.
func compactObject(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	o := &watchObject{namespace: u.GetNamespace(), name: u.GetName(), resourceVersion: u.GetResourceVersion()}
	raw, err := marshal(u.Object)
	if err == nil {
		o.checksum, err = objectChecksum(u.Object)
	}
	if err != nil {
		o.err = fmt.Errorf("encode object: %w", err)
		return o, nil
	}
	o.raw = raw
	return o, nil
}

// watchNote is an object as one notification hands it to every consumer:
// decoded at most once, by the first consumer that needs the decoded form.
// It is used by one goroutine, under the fan-out lock.
type watchNote struct {
	obj     *watchObject
	decoded map[string]any
	err     error
	done    bool
}

// object returns the decoded object, numbers as int64 or float64 as the
// dynamic client decodes them. Consumers must not modify it.
func (n *watchNote) object() (map[string]any, error) {
	if !n.done {
		n.done = true
		if n.err = n.obj.err; n.err == nil {
			if err := utiljson.Unmarshal(n.obj.raw, &n.decoded); err != nil {
				n.err = fmt.Errorf("decode object: %w", err)
			}
		}
	}
	return n.decoded, n.err
}

// syncChecker tells whether a consumer has its initial list.
type syncChecker interface {
	HasSynced() bool
}

// watchConsumer receives an informer's notifications in order, one at a
// time (on a shared informer with its fan-out lock held): it must not
// block.
type watchConsumer interface {
	// transform makes what an informer that serves this consumer alone
	// keeps of u; it may modify u.
	transform(ctx context.Context, u *unstructured.Unstructured) any
	// notify reports an object: a *watchNote from a shared informer, else
	// what transform made (or a tombstone holding it). For Added, initial
	// is set when the object belongs to the list the consumer starts with.
	notify(ctx context.Context, ev hook.WatchEvent, obj any, initial bool)
	// watchFailed reports a failed list or watch; synced tells whether the
	// consumer has its initial list.
	watchFailed(synced syncChecker, err error)
}

// objectRef is an object's namespace and name.
type objectRef struct{ namespace, name string }

// sharedWatch is one informer and the consumers it fans out to. An
// informer with an owner serves that consumer alone: its store holds what
// the owner's transform makes, the cheapest form for one binding, and it
// takes no other consumers.
type sharedWatch struct {
	key   watchKey
	owner watchConsumer
	// store is the informer's store, what the transform made; ctrl runs
	// the informer and tells when its initial list is handed over.
	store  cache.Store
	ctrl   cache.Controller
	cancel context.CancelFunc
	// exited is closed when the informer has returned, its handler with it.
	exited chan struct{}
	// refs counts the leases; guarded by the pool's mu.
	refs int

	// mu guards the fields below and serialises notifications, joins and
	// leaves, so a consumer sees each object once and in order.
	mu        sync.Mutex
	consumers []watchConsumer
	// objects are the objects as the handler has seen them: a joiner starts
	// from exactly the point of the stream the other consumers are at,
	// where the informer's store may be ahead. Nil with an owner.
	objects map[objectRef]*watchObject
}

// transform is the informer's transform.
func (w *sharedWatch) transform(ctx context.Context) cache.TransformFunc {
	if w.owner == nil {
		return compactObject
	}
	return func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			return w.owner.transform(ctx, u), nil
		}
		return obj, nil
	}
}

// dispatch hands what the informer reported to its owner as it is, or
// records obj (a watchObject, or a tombstone holding one) and hands it to
// every consumer.
func (w *sharedWatch) dispatch(ctx context.Context, ev hook.WatchEvent, obj any, initial bool) {
	if w.owner != nil {
		w.owner.notify(ctx, ev, obj, initial)
		return
	}
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(*watchObject)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ref := objectRef{o.namespace, o.name}
	if ev == hook.Deleted {
		delete(w.objects, ref)
	} else {
		w.objects[ref] = o
	}
	n := &watchNote{obj: o}
	for _, c := range w.consumers {
		c.notify(ctx, ev, n, initial)
	}
}

// join adds c after handing it the objects seen so far as its initial
// list; the rest of the informer's initial list, if it has not synced,
// follows as initial notifications.
func (w *sharedWatch) join(ctx context.Context, c watchConsumer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.objects {
		c.notify(ctx, hook.Added, &watchNote{obj: o}, true)
	}
	w.consumers = append(w.consumers, c)
}

// leave removes c; it gets no notification once leave has returned.
func (w *sharedWatch) leave(c watchConsumer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, x := range w.consumers {
		if x == c {
			w.consumers = append(w.consumers[:i:i], w.consumers[i+1:]...)
			return
		}
	}
}

// watchFailed hands a failed list or watch to every consumer.
func (w *sharedWatch) watchFailed(err error) {
	if w.owner != nil {
		w.owner.watchFailed(w.ctrl, err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.consumers {
		c.watchFailed(w.ctrl, err)
	}
}

// names returns the names of the objects seen so far.
func (w *sharedWatch) names() []string {
	if w.owner != nil {
		return w.store.ListKeys() // cluster-scoped keys are names
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.objects))
	for ref := range w.objects {
		out = append(out, ref.name)
	}
	return out
}

// informerPool holds the informers by watch. The first consumer of a watch
// gets an informer of its own, which keeps only what that consumer needs;
// a second one starts the watch's shared informer, which keeps objects in
// the one form (watchObject) every consumer can take its part of, and
// every later one joins it. A shared informer is reference-counted by
// leases: the last one released stops it. So a watch costs at most two
// informers however many bindings ask for it, and a watch of one binding
// costs what it did before informers were shared. Its methods are safe for
// concurrent use; mu guards both maps and every watch's refs.
type informerPool struct {
	dynamic dynamic.Interface
	// log gets client-go's own lines about the informers, at debug level.
	log *slog.Logger
	// wg has every informer's goroutine.
	wg sync.WaitGroup

	mu        sync.Mutex
	shared    map[watchKey]*sharedWatch
	exclusive map[watchKey]*sharedWatch
}

func newInformerPool(dyn dynamic.Interface, log *slog.Logger) *informerPool {
	return &informerPool{
		dynamic:   dyn,
		log:       log,
		shared:    make(map[watchKey]*sharedWatch),
		exclusive: make(map[watchKey]*sharedWatch),
	}
}

// lease is one consumer's hold on a shared watch.
type lease struct {
	pool     *informerPool
	watch    *sharedWatch
	consumer watchConsumer
	once     sync.Once
}

// acquire gives c the objects of key: from an informer of its own when no
// other consumer watches key, else from the shared informer of key,
// started if none runs. The informer runs under ctx's values but is
// stopped only by the release of its last lease, as other consumers may
// outlive ctx.
func (p *informerPool) acquire(ctx context.Context, key watchKey, c watchConsumer) *lease {
	p.mu.Lock()
	w := p.shared[key]
	switch {
	case w != nil:
	case p.exclusive[key] != nil:
		w = p.start(ctx, key, nil)
		p.shared[key] = w
	default:
		w = p.start(ctx, key, c)
		p.exclusive[key] = w
	}
	w.refs++
	p.mu.Unlock()
	if w.owner == nil {
		w.join(ctx, c)
	}
	return &lease{pool: p, watch: w, consumer: c}
}

// start starts the informer of key, for owner alone or, with a nil owner,
// with one handler that fans out to the consumers.
func (p *informerPool) start(ctx context.Context, key watchKey, owner watchConsumer) *sharedWatch {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &sharedWatch{key: key, owner: owner, cancel: cancel, exited: make(chan struct{})}
	if owner == nil {
		w.objects = make(map[objectRef]*watchObject)
	}
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { w.dispatch(ctx, hook.Added, obj, initial) },
		UpdateFunc: func(_, obj any) { w.dispatch(ctx, hook.Modified, obj, false) },
		DeleteFunc: func(obj any) { w.dispatch(ctx, hook.Deleted, obj, false) },
	}
	var runCtx context.Context
	w.store, w.ctrl, runCtx = newInformer(ctx, p.dynamic, key, handler, w.transform(ctx), w.watchFailed, p.log)
	p.wg.Go(func() {
		defer close(w.exited)
		w.ctrl.RunWithContext(runCtx)
	})
	return w
}

// wait waits until every informer has exited.
func (p *informerPool) wait() { p.wg.Wait() }

// synced is closed once the consumer has its initial list.
func (l *lease) synced() <-chan struct{} { return l.watch.ctrl.HasSyncedChecker().Done() }

// release ends the lease: its consumer gets no notification once release
// has returned. The last lease of an informer stops it and waits until it
// has exited. Releasing twice does nothing.
func (l *lease) release() {
	l.once.Do(func() {
		w, p := l.watch, l.pool
		w.leave(l.consumer)
		p.mu.Lock()
		w.refs--
		last := w.refs == 0
		if last && w.owner != nil {
			delete(p.exclusive, w.key)
		} else if last {
			delete(p.shared, w.key)
		}
		p.mu.Unlock()
		if last {
			w.cancel()
			<-w.exited
		}
	})
}

// size is the number of running informers.
func (p *informerPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.shared) + len(p.exclusive)
}
