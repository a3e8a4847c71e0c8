// Package monitor runs the informers of hooks' kubernetes bindings: selectors,
// jq filters, snapshots and the events that feed the bindings.
package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Monitor errors.
var (
	// ErrInvalidBinding marks a kubernetes binding that cannot be watched as
	// configured (a jq filter that does not compile, a namespace selector on
	// a cluster-scoped kind). Retrying does not help.
	ErrInvalidBinding = errors.New("invalid kubernetes binding")
	// ErrStopped is returned by Start when Monitors.Run has returned,
	// or when the monitor was stopped before it synced.
	ErrStopped = errors.New("monitors stopped")

	errIDTaken = errors.New("a monitor with this id is running")
)

// Event is one change of an object watched by a kubernetes binding.
// Object and FilterResult are shared with the monitor's cache and must not
// be modified.
type Event struct {
	// ID is the id the binding's monitor was started with.
	ID         string
	WatchEvent hook.WatchEvent
	// Namespace (empty for cluster-scoped objects) and Name identify the
	// object, also when the binding keeps no full objects.
	Namespace string
	Name      string
	// Object is the object at the moment of the event (for Deleted, its last
	// known state), metadata.managedFields included; nil when the binding
	// has keepFullObjectsInMemory: false.
	Object json.RawMessage
	// FilterResult is the jqFilter's result on Object; nil without jqFilter.
	FilterResult json.RawMessage
}

// Options are the dependencies of Monitors.
type Options struct {
	// Dynamic lists and watches the objects.
	Dynamic dynamic.Interface
	// Kinds resolves the kinds of bindings; share the process's Discovery's.
	Kinds *kube.Resolver
	// Log receives watch failures and jq filter errors; nil discards them.
	Log *slog.Logger
	// Events receives every monitor's events, in order per monitor.
	Events chan<- Event
}

// Monitors runs the informers of kubernetes bindings: one monitor per
// binding, named by an id the caller chooses (unique among running
// monitors); monitors whose bindings watch alike share informers. Its goroutines belong to Run; its methods are safe for
// concurrent use. The monitors map is guarded by mu.
type Monitors struct {
	// watches are the informers, each shared by the monitors whose
	// bindings watch alike.
	watches *informerPool
	kinds   *kube.Resolver
	log     *slog.Logger
	events  chan<- Event

	// starts hands a new monitor to Run, which runs it under its context.
	starts chan *monitor
	// finished is closed when Run has returned and every monitor stopped.
	finished chan struct{}

	mu       sync.Mutex
	running  bool
	monitors map[string]*monitor
}

// NewMonitors returns Monitors that do nothing until Run is called.
func NewMonitors(opts Options) (*Monitors, error) {
	if opts.Dynamic == nil || opts.Events == nil || opts.Kinds == nil {
		return nil, errors.New("monitors need a dynamic client, an events channel and a resolver")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Monitors{
		watches:  newInformerPool(opts.Dynamic, log),
		kinds:    opts.Kinds,
		log:      log,
		events:   opts.Events,
		starts:   make(chan *monitor),
		finished: make(chan struct{}),
		monitors: make(map[string]*monitor),
	}, nil
}

// Run owns every monitor's goroutines. It returns nil when ctx is done,
// after all monitors have stopped; Start fails from then on. Call it once.
func (m *Monitors) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return errors.New("monitors are already running")
	}
	m.running = true
	m.mu.Unlock()

	var wg sync.WaitGroup
	defer func() {
		wg.Wait()        // ctx is done, so every monitor is stopping
		m.watches.wait() // and has released its informers
		m.mu.Lock()
		clear(m.monitors)
		m.mu.Unlock()
		close(m.finished)
	}()
	for {
		select {
		case mon := <-m.starts:
			wg.Add(1)
			go mon.run(ctx, wg.Done)
		case <-ctx.Done():
			return nil
		}
	}
}

// Start starts the monitor id for binding b and waits, within ctx, until its
// informers have listed every object. It returns the objects for the
// binding's Synchronization context, sorted by namespace and name: Object
// only with keepFullObjectsInMemory, FilterResult only with a jqFilter.
//
// The monitor then runs until Stop(id) or the end of Run's context. Its
// events (those in b.ExecuteHookOnEvent) after the returned list are held
// in order until EnableEvents(id), so the hook never sees an event before
// its Synchronization; SyncObjects trades them for a newer list.
//
// Start blocks until Run is running. The kind may be a kind, plural or
// short name in any case; a miss refreshes discovery once, so a CRD
// installed after the last lookup is found. A list the API server refuses
// (RBAC, a field it cannot select) or a jq filter failing on an object
// fails Start rather than being retried; errors from the binding itself
// wrap ErrInvalidBinding.
func (m *Monitors) Start(ctx context.Context, id string, b hook.KubernetesBinding) ([]hook.FilteredObject, error) {
	if objects, ok := m.adopt(id, b); ok {
		return objects, nil
	}
	objects, err := m.start(ctx, id, b, false)
	if err != nil {
		return nil, fmt.Errorf("start monitor %q: %w", id, err)
	}
	return objects, nil
}

func (m *Monitors) start(ctx context.Context, id string, b hook.KubernetesBinding, snapshotOnly bool) ([]hook.FilteredObject, error) {
	begin := time.Now()
	res, err := resolve(ctx, m.kinds, b.APIVersion, b.Kind)
	if err != nil {
		return nil, err
	}
	spec, err := newMonitorSpec(b, res)
	if err != nil {
		return nil, err
	}
	// The binding's own name for people, the id to tell two hooks' bindings
	// of one name apart; the monitor's lines do not repeat either.
	mon := newMonitor(id, spec, m.watches, m.events, m.log.With(slog.String(logkey.Binding, b.Name), slog.String(logkey.Monitor, id)))
	mon.binding, mon.state.snapshotOnly = b, snapshotOnly
	if err := m.register(mon); err != nil {
		return nil, err
	}
	select {
	case m.starts <- mon:
	case <-mon.stop:
		close(mon.done)
		return nil, ErrStopped
	case <-m.finished:
		m.forget(mon)
		close(mon.done)
		return nil, ErrStopped
	case <-ctx.Done():
		m.forget(mon)
		close(mon.done)
		return nil, ctx.Err()
	}
	select {
	case r := <-mon.ready:
		if r.err != nil {
			m.forget(mon)
			<-mon.done
			return nil, r.err
		}
		mon.log.Debug("monitor synced", slog.String(logkey.Kind, b.Kind), slog.Duration(logkey.Duration, time.Since(begin)))
		return r.objects, nil
	case <-ctx.Done():
		m.forget(mon)
		mon.halt()
		return nil, ctx.Err()
	}
}

// register adds mon under its id unless Run has finished or the id is taken.
func (m *Monitors) register(mon *monitor) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.finished:
		return ErrStopped
	default:
	}
	if _, ok := m.monitors[mon.id]; ok {
		return errIDTaken
	}
	m.monitors[mon.id] = mon
	return nil
}

// forget removes mon from the running monitors if it is still registered.
func (m *Monitors) forget(mon *monitor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.monitors[mon.id] == mon {
		delete(m.monitors, mon.id)
	}
}

func (m *Monitors) get(id string) *monitor {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.monitors[id]
}

// EnableEvents delivers the events the monitor id held since Start, then
// every later one as it happens. Call it when the binding's Synchronization
// run has completed. Unknown ids are ignored.
func (m *Monitors) EnableEvents(id string) {
	if mon := m.get(id); mon != nil {
		mon.state.enable()
	}
}

// Snapshot returns the objects the monitor id sees now, in the shape and
// order Start returns them; nil for an unknown id. It reflects every event
// received so far, delivered or held.
func (m *Monitors) Snapshot(id string) []hook.FilteredObject {
	if mon := m.get(id); mon != nil {
		return mon.state.snapshot()
	}
	return nil
}

// SyncObjects returns the objects for a Synchronization context that runs
// now, instead of those Start returned, and drops the events held so far:
// the objects already reflect them, so the hook sees each change once.
// Held events are dropped only until EnableEvents; nil for an unknown id.
func (m *Monitors) SyncObjects(id string) []hook.FilteredObject {
	if mon := m.get(id); mon != nil {
		return mon.state.syncObjects()
	}
	return nil
}

// Stop stops the monitor id and waits until it has left its informers,
// which stop with the last monitor using them. Held events are dropped;
// events already sent stay in the channel and carry an id that is no
// longer running. Unknown ids are ignored.
func (m *Monitors) Stop(id string) {
	m.mu.Lock()
	mon := m.monitors[id]
	delete(m.monitors, id)
	m.mu.Unlock()
	if mon != nil {
		mon.halt()
	}
}
