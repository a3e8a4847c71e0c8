package moduleobject

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// FieldManager is the server-side apply field manager of the operator's
// writes to Module objects.
const FieldManager = "addon-operator"

// NamespaceLabel marks the Module objects of the operator that runs in the
// label's value (a namespace); only those are pruned.
const NamespaceLabel = "addon-operator.io/namespace"

// Defaults of Options.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultHoldMax  = 10 * time.Second
	DefaultWorkers  = 4
	retryDelay      = 5 * time.Second
)

// Options configure a Writer.
type Options struct {
	Dynamic dynamic.Interface
	// Namespace is the operator's namespace, the value of NamespaceLabel.
	Namespace string
	// Interval is how long changes are collected before they are written:
	// a burst of changes to one module is one write.
	Interval time.Duration
	// HoldMax is how long changes are collected at most while the
	// operator holds writes (Hold): during a converge.
	HoldMax time.Duration
	// Workers is how many writes may be in flight at once.
	Workers int
	Clock   clock.Clock
	Logger  *slog.Logger
	// Metrics counts the writes; nil counts none.
	Metrics writeMetrics
	// ConfigSource, when set, names the configuration source that a
	// module's status.SourceConfigMap stands for ("moduleconfig").
	ConfigSource func() string
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
}

// Writer keeps the Module objects. Update and Prune only record what is
// wanted and return at once; Run owns every API call. The maps are guarded
// by mu: Update's callers and Run's workers share them.
type Writer struct {
	opts Options
	res  dynamic.NamespaceableResourceInterface
	wake chan struct{}
	off  atomic.Bool
	// held defers writes (Hold); release wakes the writer when it ends.
	held    atomic.Bool
	release chan struct{}

	mu      sync.Mutex
	want    map[string]State
	dirty   map[string]bool
	keep    map[string]bool // modules whose objects stay; nil until Prune
	pruned  bool            // keep was applied
	objs    map[string]objRef
	written map[string]v1.ModuleStatus

	writes atomic.Int64
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
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Writer{
		opts: opts, res: opts.Dynamic.Resource(v1.ModulesResource()), wake: make(chan struct{}, 1), release: make(chan struct{}, 1),
		want: map[string]State{}, dirty: map[string]bool{}, objs: map[string]objRef{}, written: map[string]v1.ModuleStatus{},
	}
}

// Update records a module's new state; Run writes it. It never blocks.
func (w *Writer) Update(s State) {
	if w.off.Load() {
		return
	}
	w.mu.Lock()
	w.want[s.Name], w.dirty[s.Name] = s, true
	w.mu.Unlock()
	w.notify()
}

// Prune says which modules exist: the objects of every other module (of
// this operator's namespace) are deleted. Nothing is written before the
// first Prune: the operator calls it once it has decided which modules are
// enabled, so that objects do not show a start-up state for a moment.
func (w *Writer) Prune(modules []string) {
	w.mu.Lock()
	w.keep, w.pruned = map[string]bool{}, false
	for _, m := range modules {
		w.keep[m] = true
	}
	w.mu.Unlock()
	w.notify()
}

// Hold defers writes while on is true, for HoldMax at most between two
// writes: the operator holds them during a converge, whose module runs
// need the API server more, and releases them at its end, when what
// changed is written at once. It never blocks.
func (w *Writer) Hold(on bool) {
	w.held.Store(on)
	if !on {
		select {
		case w.release <- struct{}{}:
		default:
		}
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

func (w *Writer) notify() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run reads the existing objects, then writes what Update and Prune
// asked for until ctx ends. Without the CRD or the right to list Module
// objects it says so once and returns nil: the operator runs without them.
func (w *Writer) Run(ctx context.Context) error {
	if !w.start(ctx) {
		return nil
	}
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		case <-retry:
		}
		if !w.collect(ctx) {
			return nil
		}
		retry = nil
		if !w.pruneAsked() {
			continue // wait for the first Prune
		}
		if failed := w.flush(ctx); failed && !w.off.Load() {
			retry = w.opts.Clock.After(retryDelay)
		}
		if w.off.Load() {
			return nil
		}
	}
}

func (w *Writer) pruneAsked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keep != nil
}

// collect waits for the rest of a burst: Interval, or while writes are
// held until they are released or HoldMax passed. It reports false when
// ctx ended.
func (w *Writer) collect(ctx context.Context) bool {
	held := w.held.Load()
	wait := w.opts.Interval
	if held {
		wait = w.opts.HoldMax
	}
	until := w.opts.Clock.After(wait)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-until:
			if !held && w.held.Load() {
				// A hold began while the burst was collected: it holds
				// these changes too.
				held, until = true, w.opts.Clock.After(w.opts.HoldMax)
				continue
			}
			return true
		case <-w.release:
			if !w.held.Load() {
				return true
			}
		}
	}
}

// start lists this operator's objects until it can, remembering them; it
// reports false when objects are off for good or ctx ended.
func (w *Writer) start(ctx context.Context) bool {
	for {
		list, err := w.res.List(ctx, metav1.ListOptions{LabelSelector: NamespaceLabel + "=" + w.opts.Namespace})
		if err == nil {
			w.remember(list.Items)
			return true
		}
		if w.turnOff(err) {
			return false
		}
		w.opts.Logger.Warn("module objects not listed, will retry", logkey.Err(err))
		select {
		case <-ctx.Done():
			return false
		case <-w.opts.Clock.After(retryDelay):
		}
	}
}

// turnOff switches objects off, with one log line, when err says the CRD
// is missing or the operator may not use it.
func (w *Writer) turnOff(err error) bool {
	var reason string
	switch {
	case apierrors.IsNotFound(err):
		reason = "the CustomResourceDefinition modules." + v1.Group + " is not installed"
	case apierrors.IsForbidden(err):
		reason = "the operator may not list, create, patch or delete modules." + v1.Group
	default:
		return false
	}
	if !w.off.Swap(true) {
		w.opts.Logger.Warn("module objects off: modules are not shown as Module objects; the operator works on without them",
			slog.String(logkey.Reason, reason), logkey.Err(err))
	}
	return true
}

func (w *Writer) remember(items []unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range items {
		u := &items[i]
		w.objs[u.GetName()] = objRef{uid: u.GetUID(), gen: u.GetGeneration()}
		var m v1.Module
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err == nil {
			w.written[u.GetName()] = m.Status
		}
	}
}

// flush prunes when asked and writes every dirty module; it reports
// whether some write failed (those modules stay dirty).
func (w *Writer) flush(ctx context.Context) bool {
	w.mu.Lock()
	names := slices.Sorted(maps.Keys(w.dirty))
	clear(w.dirty)
	var gone []string
	if w.keep != nil && !w.pruned {
		w.pruned = true
		for name := range w.objs {
			if !w.keep[name] {
				gone = append(gone, name)
			}
		}
	}
	w.mu.Unlock()
	var failed atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(w.opts.Workers)
	for _, name := range gone {
		g.Go(func() error {
			if err := w.remove(gctx, name); err != nil {
				failed.Store(true)
			}
			return nil
		})
	}
	for _, name := range names {
		g.Go(func() error {
			if err := w.write(gctx, name); err != nil && ctx.Err() == nil {
				failed.Store(true)
				w.mu.Lock()
				w.dirty[name] = true
				w.mu.Unlock()
				if !w.turnOff(err) {
					w.opts.Logger.Warn("module object not written, will retry", slog.String(logkey.Module, name), logkey.Err(err))
				}
			}
			return nil
		})
	}
	_ = g.Wait() // the workers return nil
	return failed.Load()
}

func (w *Writer) remove(ctx context.Context, name string) error {
	err := w.res.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.opts.Logger.Warn("module object of a gone module not deleted", slog.String(logkey.Module, name), logkey.Err(err))
		w.mu.Lock()
		w.pruned = false
		w.mu.Unlock()
		return err
	}
	if err == nil {
		w.wrote("delete")
	}
	w.mu.Lock()
	delete(w.objs, name)
	delete(w.written, name)
	w.mu.Unlock()
	w.opts.Logger.Info("module object of a gone module deleted", slog.String(logkey.Module, name))
	return nil
}

// write brings one module's object up to its wanted state: it creates the
// object when it is not known and applies the status when it differs from
// the last one written.
func (w *Writer) write(ctx context.Context, name string) error {
	for attempt := 0; ; attempt++ {
		w.mu.Lock()
		s := w.want[name]
		if s.By == status.SourceConfigMap && w.opts.ConfigSource != nil {
			s.By = status.Source(w.opts.ConfigSource())
		}
		ref, known := w.objs[name]
		prev := w.written[name]
		w.mu.Unlock()
		if !known {
			var err error
			if ref, err = w.create(ctx, name); err != nil {
				return err
			}
		}
		st := Compute(s, ref.gen, prev.Conditions, w.opts.Clock.Now())
		if apiequality.Semantic.DeepEqual(st, prev) {
			return nil
		}
		err := w.applyStatus(ctx, name, st)
		if apierrors.IsNotFound(err) && attempt == 0 {
			// Deleted by someone: create it again.
			w.mu.Lock()
			delete(w.objs, name)
			delete(w.written, name)
			w.mu.Unlock()
			continue
		}
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.written[name] = st
		w.mu.Unlock()
		return nil
	}
}

func (w *Writer) create(ctx context.Context, name string) (objRef, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.APIVersion, "kind": v1.KindModule,
		"metadata": map[string]any{"name": name, "labels": map[string]any{
			NamespaceLabel: w.opts.Namespace, "app.kubernetes.io/managed-by": "addon-operator",
		}},
	}}
	got, err := w.res.Apply(ctx, name, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return objRef{}, fmt.Errorf("create module object %s: %w", name, err)
	}
	w.wrote("create")
	ref := objRef{uid: got.GetUID(), gen: got.GetGeneration()}
	w.mu.Lock()
	w.objs[name] = ref
	w.mu.Unlock()
	return ref, nil
}

func (w *Writer) applyStatus(ctx context.Context, name string, st v1.ModuleStatus) error {
	m := v1.Module{TypeMeta: metav1.TypeMeta{APIVersion: v1.APIVersion, Kind: v1.KindModule}, ObjectMeta: metav1.ObjectMeta{Name: name}, Status: st}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err != nil {
		return fmt.Errorf("encode module object %s: %w", name, err)
	}
	delete(obj["metadata"].(map[string]any), "creationTimestamp")
	_, err = w.res.ApplyStatus(ctx, name, &unstructured.Unstructured{Object: obj}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply status of module object %s: %w", name, err)
	}
	w.wrote("status")
	return nil
}
