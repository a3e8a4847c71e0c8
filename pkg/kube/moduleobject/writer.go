package moduleobject

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// FieldManager is the server-side apply field manager of the operator's
// writes to Module objects.
const FieldManager = "addon-operator"

// NamespaceLabel marks the Module objects of the operator that runs in the
// label's value (a namespace); only those are pruned.
const NamespaceLabel = "addon-operator.io/namespace"

// Defaults of Options.
const (
	// DefaultInterval is longer than most module runs that find nothing
	// to do (tens to hundreds of milliseconds), so such a run is one
	// write of its end state, and short enough that a person watching
	// kubectl sees a run begin.
	DefaultInterval     = 500 * time.Millisecond
	DefaultHoldMax      = 10 * time.Second
	DefaultWorkers      = 4
	DefaultFlushTimeout = 5 * time.Second
	retryDelay          = 5 * time.Second
	retryMaxDelay       = 5 * time.Minute
	retryBaseDelay      = time.Second
)

// Options configure a Writer.
type Options struct {
	Dynamic dynamic.Interface
	// Namespace is the operator's namespace, the value of NamespaceLabel.
	Namespace string
	// Interval is how long a module's changes are collected, from the
	// first one not yet written, before its latest state is written: a
	// run shorter than that is one write of how it ended.
	Interval time.Duration
	// HoldMax is how long a module's changes are collected at most while
	// the operator holds writes (Hold): during a converge.
	HoldMax time.Duration
	// Workers is how many writes may be in flight at once.
	Workers int
	// FlushTimeout bounds the writes of the states not yet written when
	// Run's context ends.
	FlushTimeout time.Duration
	Clock        clock.WithTicker
	Logger       *slog.Logger
	// Metrics counts the writes; nil counts none.
	Metrics writeMetrics
	// ConfigSource, when set, names the configuration source that a
	// module's status.SourceConfigMap stands for ("moduleconfig").
	ConfigSource func() string
	// Redact, when set, removes secrets from a state's last error and
	// message before they are written: whoever may read Module objects
	// must not read what the API server quoted of a rejected Secret
	// (*redact.Redactor.String).
	Redact func(string) string
}

// writeMetrics counts writes by operation: create, status, delete;
// *metrics.Recorder is the real one.
type writeMetrics interface {
	ModuleObjectWrite(operation string)
}

// objRef is what the Writer knows of an existing object.
type objRef struct {
	uid types.UID
	gen int64
	// labels are the object's definition labels (DefinitionLabels).
	labels map[string]string
}

// Writer keeps the Module objects. Update, Prune and Hold only record
// what is wanted and return at once; Run's workers send every API call.
// Each module is one key of a client-go rate-limited delaying queue, so
// one module's writes never overlap and keep their order, a failed one is
// retried with exponential backoff, and a module's changes wait Interval
// (HoldMax while held) from the first one not yet written. The maps are
// guarded by mu: Update's callers and Run's workers share them.
type Writer struct {
	opts  Options
	res   dynamic.NamespaceableResourceInterface
	off   atomic.Bool
	offCh chan struct{} // closed when objects turn off

	mu      sync.Mutex
	queue   workqueue.TypedRateLimitingInterface[string] // nil outside Run
	held    bool
	closing bool // Run's context ended: later changes are not written
	want    map[string]State
	since   map[string]time.Time // a module's first change not yet written
	keep    map[string]bool      // modules whose objects stay; nil until Prune
	objs    map[string]objRef
	written map[string]v1.ModuleStatus
	// inflight is the status being applied, whose watch event may come
	// before the write returns.
	inflight map[string]*v1.ModuleStatus
	// check holds the modules whose object someone else may have
	// changed or deleted (observe); handle verifies it.
	check          map[string]bool
	lastRestore    map[string]time.Time
	restoreLimiter workqueue.TypedRateLimiter[string]
	// watchSynced reports whether the watch has seen every object; nil
	// before Run starts it.
	watchSynced func() bool

	reconcile reconcileRequests

	writes  atomic.Int64
	handled atomic.Int64 // queue keys handled, for tests
}

// New returns a Writer; nothing is written before Run.
func New(opts Options) *Writer {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Workers < 1 {
		opts.Workers = DefaultWorkers
	}
	if opts.HoldMax <= 0 {
		opts.HoldMax = DefaultHoldMax
	}
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = DefaultFlushTimeout
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Writer{
		opts: opts, res: opts.Dynamic.Resource(v1.ModulesResource()), offCh: make(chan struct{}),
		want: map[string]State{}, since: map[string]time.Time{}, objs: map[string]objRef{}, written: map[string]v1.ModuleStatus{},
		inflight: map[string]*v1.ModuleStatus{}, check: map[string]bool{}, lastRestore: map[string]time.Time{},
		restoreLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](restoreBaseDelay, restoreMaxDelay),
	}
}

// Update records a module's new state; Run writes the latest state of a
// module Interval after its first change not yet written. It never blocks.
func (w *Writer) Update(s State) {
	if w.off.Load() {
		return
	}
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return
	}
	if w.opts.Redact != nil {
		s.LastError, s.Message = w.opts.Redact(s.LastError), w.opts.Redact(s.Message)
	}
	w.want[s.Name] = s
	_, pending := w.since[s.Name]
	if !pending {
		w.since[s.Name] = w.opts.Clock.Now()
	}
	q := w.queue
	if w.keep == nil {
		q = nil // nothing is written before the first Prune
	}
	w.mu.Unlock()
	if q != nil && !pending {
		q.AddAfter(s.Name, w.opts.Interval)
	}
}

// Prune says which modules exist: the objects of every other module (of
// this operator's namespace) are deleted. Nothing is written before the
// first Prune: the operator calls it once it has decided which modules are
// enabled, so that objects do not show a start-up state for a moment.
func (w *Writer) Prune(modules []string) {
	w.mu.Lock()
	w.keep = map[string]bool{}
	for _, m := range modules {
		w.keep[m] = true
	}
	q := w.queue
	w.mu.Unlock()
	if q != nil {
		w.enqueuePending(q)
	}
}

// Hold defers writes while on is true, each module's for HoldMax at most
// after its first change not yet written: the operator holds them during
// a converge, whose module runs need the API server more, and releases
// them at its end, when what changed is written at once. It never blocks.
func (w *Writer) Hold(on bool) {
	w.mu.Lock()
	w.held = on
	q := w.queue
	var names []string
	if !on && w.keep != nil {
		names = slices.Collect(maps.Keys(w.since))
	}
	w.mu.Unlock()
	if q != nil {
		for _, name := range names {
			q.Add(name)
		}
	}
}

// enqueuePending queues the deletion of the objects of gone modules and
// the writes of every change not yet written.
func (w *Writer) enqueuePending(q workqueue.TypedRateLimitingInterface[string]) {
	w.mu.Lock()
	var gone, dirty []string
	if w.keep != nil {
		for name := range w.objs {
			if !w.keep[name] {
				gone = append(gone, name)
			}
		}
		dirty = slices.Collect(maps.Keys(w.since))
	}
	w.mu.Unlock()
	for _, name := range gone {
		q.Add(name)
	}
	for _, name := range dirty {
		q.AddAfter(name, w.opts.Interval)
	}
}

// Writes returns how many Module objects were written (created, status
// applied, deleted).
func (w *Writer) Writes() int64 { return w.writes.Load() }

func (w *Writer) wrote(operation string) {
	w.writes.Add(1)
	if w.opts.Metrics != nil {
		w.opts.Metrics.ModuleObjectWrite(operation)
	}
}

// Ref returns a reference to a module's object, for Events about it; false
// before the object exists or when objects are off.
func (w *Writer) Ref(module string) (*corev1.ObjectReference, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.objs[module]
	if !ok || w.off.Load() {
		return nil, false
	}
	return &corev1.ObjectReference{APIVersion: v1.APIVersion, Kind: v1.KindModule, Name: module, UID: r.uid}, true
}

// Run reads the existing objects, then writes what Update and Prune ask
// for until ctx ends. It watches the objects meanwhile: one deleted or
// with a status edited by someone else is written again within
// restoreBaseDelay. Then it writes, within FlushTimeout, every state
// recorded before ctx ended and not yet written, held or not, so the
// objects do not keep showing a run that ended; changes recorded after
// that (the cancelled runs of a shutdown) are not written. Without the CRD
// or the right to list Module objects it says so once and returns nil:
// the operator runs without them.
func (w *Writer) Run(ctx context.Context) error {
	if !w.start(ctx) {
		return nil
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryBaseDelay, retryMaxDelay),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "module-objects", Clock: w.opts.Clock})
	defer q.ShutDown()
	w.mu.Lock()
	w.queue = q
	w.mu.Unlock()
	w.enqueuePending(q)

	// Writes outlive ctx by FlushTimeout at most, for the final flush.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w.watch(watchCtx, &wg)
	for range w.opts.Workers {
		wg.Go(func() {
			for w.processNext(wctx, q) {
			}
		})
	}
	select {
	case <-w.offCh:
		cancel()
		stopWatch()
		q.ShutDown()
		wg.Wait()
	case <-ctx.Done():
		w.drain(wctx, cancel, q, &wg)
	}
	return nil
}

// drain ends Run: later changes are not recorded, the workers write the
// keys already queued (the waiting ones are dropped), then flushRest
// writes every state still not written; cancel ends the writes when
// FlushTimeout is up.
func (w *Writer) drain(ctx context.Context, cancel context.CancelFunc, q workqueue.TypedRateLimitingInterface[string], workers *sync.WaitGroup) {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	timeUp := w.opts.Clock.After(w.opts.FlushTimeout)
	done := make(chan struct{})
	var timer sync.WaitGroup
	timer.Go(func() {
		select {
		case <-timeUp:
			cancel()
		case <-done:
		}
	})
	q.ShutDown()
	workers.Wait()
	w.flushRest(ctx)
	close(done)
	timer.Wait()
}

// processNext handles one key of the queue; false once the queue is shut
// down and empty.
func (w *Writer) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) bool {
	name, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(name)
	defer w.handled.Add(1)
	if err := w.handle(ctx, q, name); err != nil {
		if w.turnOff(err) || w.off.Load() {
			return true // Run stops the workers
		}
		w.opts.Logger.Warn("module object not written, will retry", slog.String(logkey.Module, name), logkey.Err(err))
		q.AddRateLimited(name)
		return true
	}
	q.Forget(name)
	return true
}

// handle deletes the object of a gone module, or writes a module's latest
// state unless writes are held and its first change is younger than
// HoldMax, in which case it comes back when that age is reached.
func (w *Writer) handle(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], name string) error {
	w.mu.Lock()
	if w.keep != nil && !w.keep[name] {
		_, exists := w.objs[name]
		w.mu.Unlock()
		if !exists {
			return nil
		}
		return w.remove(ctx, name)
	}
	checking := w.check[name]
	delete(w.check, name)
	since, pending := w.since[name]
	if !pending && !checking {
		w.mu.Unlock()
		return nil // written already
	}
	if w.held && !w.closing && !checking {
		if left := since.Add(w.opts.HoldMax).Sub(w.opts.Clock.Now()); left > 0 {
			w.mu.Unlock()
			q.AddAfter(name, left)
			return nil
		}
	}
	s, known := w.want[name]
	delete(w.since, name)
	w.mu.Unlock()
	if !known {
		return nil
	}
	err := w.restoreOrWrite(ctx, name, s, checking, pending)
	if err != nil {
		w.mu.Lock()
		if pending {
			w.since[name] = since // the oldest unwritten change stays the reference
		}
		if checking {
			w.check[name] = true
		}
		w.mu.Unlock()
	}
	return err
}

// restoreOrWrite writes a module's state when it changed (pending), or
// checks its object, changed by someone else or deleted, and restores it.
func (w *Writer) restoreOrWrite(ctx context.Context, name string, s State, checking, pending bool) error {
	if checking {
		return w.restore(ctx, name, s)
	}
	if !pending {
		return nil
	}
	return w.write(ctx, name, s, false)
}

// flushRest writes, after the workers stopped, every state not yet
// written; it logs once how many failed.
func (w *Writer) flushRest(ctx context.Context) {
	w.mu.Lock()
	var names []string
	if w.keep != nil && !w.off.Load() {
		names = slices.Sorted(maps.Keys(w.since))
	}
	w.mu.Unlock()
	var failed atomic.Int64
	g := errgroup.Group{}
	g.SetLimit(w.opts.Workers)
	for _, name := range names {
		g.Go(func() error {
			if err := w.handle(ctx, nil, name); err != nil {
				failed.Add(1)
			}
			return nil
		})
	}
	_ = g.Wait() // the writes return nil
	if n := failed.Load(); n > 0 {
		w.opts.Logger.Warn("module objects not written at shutdown: they show an earlier state until the next start",
			slog.Int64(logkey.Count, n))
	}
}
