// Package heal reports objects of deployed releases that were deleted, and
// deleted Helm release records, so that the operator can restore them, and
// objects that were written, so that their drift can be checked.
package heal

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ErrStopped is returned by WaitSynced when Run has returned.
var ErrStopped = errors.New("heal watcher stopped")

// ObjectRef names one object of a release, as its manifest does: Namespace
// is empty for cluster-scoped objects and for namespaced objects that live
// in the release namespace.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// String returns the reference as "Kind namespace/name".
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Event reports that an object of Module's release was deleted, so the
// module must be run again to restore it. Object is the reference passed to
// Watch, with the namespace the object was deleted from. An object that
// loses the module label counts as deleted: the label-selected watch cannot
// tell the two apart.
type Event struct {
	Module string
	Object ObjectRef
}

// Options are the dependencies of a Watcher.
type Options struct {
	// Metadata lists and watches the objects' metadata.
	Metadata metadata.Interface
	// Kinds resolves kinds to resources; share the process's Discovery's,
	// which refreshes on a stale miss, so kinds of CRDs installed since are
	// found. Unknown kinds are retried with a backoff from a second to five
	// minutes, as discovery may lag behind a new CRD.
	Kinds *kube.Resolver
	// Clock times those retries; nil is the real clock.
	Clock clock.Clock
	// Log receives unresolvable kinds and watch failures; nil discards them.
	Log *slog.Logger
	// Events receives a Event per deleted object, at most one per module
	// between two Watch calls for it.
	Events chan<- Event
	// Changes, when not nil, receives a Change per update of a watched
	// object (a new resourceVersion) and per object an informer lists or
	// sees created, whether its module is paused or not; see Change.
	Changes chan<- Change
	// ModuleLabel is the key of the label every object of a release carries
	// (helm.LabelModule). Only objects with it are watched, so the informers
	// hold nothing but the metadata of the operator's own objects.
	ModuleLabel string
	// Namespace is the release namespace: where namespaced objects whose
	// manifest names no namespace live.
	Namespace string
}

// Watcher reports deleted objects of deployed releases, event-driven:
// metadata-only informers, one per resource and namespace, shared by every
// module, select the objects carrying the module label. Its goroutines
// belong to Run; its methods are safe for concurrent use. The modules map
// is guarded by mu.
type Watcher struct {
	metadata  metadata.Interface
	kinds     *kube.Resolver
	log       *slog.Logger
	clock     clock.Clock
	events    chan<- Event
	changes   chan<- Change
	selector  string
	namespace string

	// changed tells Run that the watched objects changed; it holds at most
	// one pending signal.
	changed chan struct{}
	// syncs asks Run for the informers it runs once the watched objects are
	// reconciled.
	syncs chan chan []*healInformer
	// finished is closed when Run has returned and every informer stopped.
	finished chan struct{}

	mu      sync.Mutex
	running bool
	modules map[string]*healModule
	// watchers are the modules that watch an object of each name, and
	// targetRefs counts the modules watching objects of each target: both
	// follow modules' objects (indexLocked), so an event or a
	// reconciliation costs what the names and targets involved cost, not a
	// walk of every module's objects.
	watchers   map[healName]map[string]struct{}
	targetRefs map[healTarget]int

	// stores serve ResourceVersion.
	stores watchedStores
}

// healModule is what the watcher knows of one module.
type healModule struct {
	// objects are the module's objects by group, kind and name.
	objects map[healName][]ObjectRef
	// paused counts Pause calls not yet matched by Resume.
	paused int
	// fired is set when an event was sent, and cleared by Watch.
	fired bool
	// targets are the targets of objects; counted in targetRefs.
	targets map[healTarget]struct{}
}

// healName identifies objects across API versions, up to their namespace.
type healName struct {
	group, kind, name string
}

// NewWatcher returns a watcher that watches nothing until Run is called
// and modules are given to Watch.
func NewWatcher(opts Options) (*Watcher, error) {
	if opts.Metadata == nil || opts.Kinds == nil || opts.Events == nil {
		return nil, errors.New("heal watcher needs a metadata client, a resolver and an events channel")
	}
	if opts.Namespace == "" {
		return nil, errors.New("heal watcher needs the release namespace")
	}
	exists, err := labels.NewRequirement(opts.ModuleLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("module label %q: %w", opts.ModuleLabel, err)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Watcher{
		metadata:   opts.Metadata,
		kinds:      opts.Kinds,
		log:        log,
		clock:      clk,
		events:     opts.Events,
		changes:    opts.Changes,
		selector:   exists.String(),
		namespace:  opts.Namespace,
		changed:    make(chan struct{}, 1),
		syncs:      make(chan chan []*healInformer),
		finished:   make(chan struct{}),
		modules:    make(map[string]*healModule),
		watchers:   make(map[healName]map[string]struct{}),
		targetRefs: make(map[healTarget]int),
	}, nil
}

// Watch makes objects the module's watched objects, replacing those of the
// last call, and re-arms its event: the next deletion of one of them sends
// one Event. Call it after every successful (or skipped) deployment
// with the objects the release rendered, while the module is paused.
//
// Watch does no I/O: Run starts the informers new kinds and namespaces need
// shortly after, and a deletion before they have listed is not seen (see
// WaitSynced). Objects with an invalid apiVersion are logged and skipped.
func (w *Watcher) Watch(module string, objects []ObjectRef) {
	index := make(map[healName][]ObjectRef, len(objects))
	for _, obj := range objects {
		gv, err := schema.ParseGroupVersion(obj.APIVersion)
		if err != nil {
			w.log.Warn("object not watched",
				slog.String(logkey.Module, module), slog.String(logkey.Kind, obj.Kind), slog.String(logkey.Name, obj.Name), logkey.Err(err))
			continue
		}
		key := healName{group: gv.Group, kind: obj.Kind, name: obj.Name}
		index[key] = append(index[key], obj)
	}
	w.mu.Lock()
	m := w.module(module)
	w.unindexLocked(module, m)
	m.objects, m.fired = index, false
	w.indexLocked(module, m)
	w.mu.Unlock()
	w.nudge()
}

// Forget stops watching the module's objects and drops its pause count.
// Call it when the module is deleted.
func (w *Watcher) Forget(module string) {
	w.mu.Lock()
	if m := w.modules[module]; m != nil {
		w.unindexLocked(module, m)
	}
	delete(w.modules, module)
	w.mu.Unlock()
	w.nudge()
}

// Pause suppresses the module's events until the matching Resume: wrap the
// operator's own Helm upgrades and uninstalls and the module's hook runs in
// Pause and Resume, so the objects they delete do not come back as events.
// Pauses nest; a module may be paused before its first Watch.
//
// Deletions are matched when the watch delivers them, usually milliseconds
// after the fact: one made just before Resume may still arrive after it and
// send an event, which costs one redundant module run.
func (w *Watcher) Pause(module string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.module(module).paused++
}

// Resume ends one Pause of the module. Extra calls are ignored.
func (w *Watcher) Resume(module string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.modules[module]; m != nil && m.paused > 0 {
		m.paused--
	}
}

// module returns the state of the named module, creating it. mu is held.
func (w *Watcher) module(name string) *healModule {
	m := w.modules[name]
	if m == nil {
		m = &healModule{}
		w.modules[name] = m
	}
	return m
}

// indexLocked adds the module's objects to watchers and targetRefs. mu
// is held.
func (w *Watcher) indexLocked(module string, m *healModule) {
	m.targets = make(map[healTarget]struct{})
	for key, objects := range m.objects {
		byModule := w.watchers[key]
		if byModule == nil {
			byModule = make(map[string]struct{})
			w.watchers[key] = byModule
		}
		byModule[module] = struct{}{}
		for _, obj := range objects {
			m.targets[healTarget{kind: schema.GroupKind{Group: key.group, Kind: key.kind}, namespace: w.objectNamespace(obj)}] = struct{}{}
		}
	}
	for t := range m.targets {
		w.targetRefs[t]++
	}
}

// unindexLocked takes what indexLocked added for the module back out. mu
// is held.
func (w *Watcher) unindexLocked(module string, m *healModule) {
	for key := range m.objects {
		delete(w.watchers[key], module)
		if len(w.watchers[key]) == 0 {
			delete(w.watchers, key)
		}
	}
	for t := range m.targets {
		w.targetRefs[t]--
		if w.targetRefs[t] <= 0 {
			delete(w.targetRefs, t)
		}
	}
	m.targets = nil
}

// nudge tells Run to reconcile its informers with the watched objects.
func (w *Watcher) nudge() {
	select {
	case w.changed <- struct{}{}:
	default: // a reconciliation is pending and will see this change
	}
}

// deleted returns the events for the deletion of namespace/name, seen by the
// informer of kind gk, and marks their modules fired: one event for each
// module that watches the object, is not paused and has not fired since its
// last Watch. Events are sorted by module.
func (w *Watcher) deleted(gk schema.GroupKind, namespaced bool, namespace, name string) []Event {
	key := healName{group: gk.Group, kind: gk.Kind, name: name}
	w.mu.Lock()
	defer w.mu.Unlock()
	var events []Event
	for module := range w.watchers[key] {
		m := w.modules[module]
		if m.fired || m.paused > 0 {
			continue
		}
		for _, obj := range m.objects[key] {
			if namespaced && w.objectNamespace(obj) != namespace {
				continue
			}
			m.fired = true
			obj.Namespace = namespace
			events = append(events, Event{Module: module, Object: obj})
			break
		}
	}
	slices.SortFunc(events, func(a, b Event) int { return strings.Compare(a.Module, b.Module) })
	return events
}

// objectNamespace is the namespace of obj if its kind is namespaced.
func (w *Watcher) objectNamespace(obj ObjectRef) string {
	if obj.Namespace == "" {
		return w.namespace
	}
	return obj.Namespace
}

// healTarget is a kind and the namespace its objects would be in if the
// kind is namespaced.
type healTarget struct {
	kind      schema.GroupKind
	namespace string
}

// targets returns the kinds and namespaces of every watched object.
func (w *Watcher) targets() map[healTarget]struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	targets := make(map[healTarget]struct{}, len(w.targetRefs))
	for t := range w.targetRefs {
		targets[t] = struct{}{}
	}
	return targets
}
