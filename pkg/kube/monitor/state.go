package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// monitorState is what one monitor knows: the objects its informers have
// reported and the events not yet delivered. The informers' handlers write
// it, Snapshot reads it and a deliver goroutine drains it; mu
// guards every field below it.
type monitorState struct {
	id     string
	events []hook.WatchEvent
	log    *slog.Logger

	mu sync.Mutex
	// objects holds entries by namespace and name. It is updated by the
	// handlers, so it matches the events exactly, where the informer
	// stores run slightly ahead.
	objects map[string]map[string]*monitorEntry
	// synced is set when Start's list was taken; only events after it are
	// queued.
	synced bool
	// syncErr is the first jq filter failure before synced.
	syncErr error
	enabled bool
	pending []Event
	// ctx and out are where events go, from startDelivery until
	// stopDelivery (out nil outside).
	ctx context.Context //nolint:containedctx // the delivery's lifetime, handed to deliver goroutines
	out chan<- Event
	// delivering is closed when the running deliver goroutine has exited;
	// nil when none runs.
	delivering chan struct{}
	// snapshotOnly keeps the objects and queues no event: the monitor of a
	// replica that serves webhooks without running hooks, until Start
	// adopts it.
	snapshotOnly bool
}

func newMonitorState(id string, events []hook.WatchEvent, log *slog.Logger) *monitorState {
	return &monitorState{
		id:      id,
		events:  events,
		log:     log,
		objects: make(map[string]map[string]*monitorEntry),
	}
}

// apply records what an informer reported about obj (an entry, or a
// tombstone holding one) and queues the event when it is one the hook runs
// on. An Added or Modified event that leaves the checksum as it was is no
// change and not queued; neither is anything before synced, nor anything
// with emit false (an informer's initial list that Start returns).
func (s *monitorState) apply(ev hook.WatchEvent, obj any, emit bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	e, ok := obj.(*monitorEntry)
	if !ok {
		return
	}
	s.mu.Lock()
	changed := s.record(ev, e)
	failed := e.err != nil && s.synced
	if e.err != nil && !s.synced && s.syncErr == nil {
		s.syncErr = fmt.Errorf("object %s: %w", objectKey(e), e.err)
	}
	queued := changed && emit && s.queueLocked(ev, e)
	s.mu.Unlock()
	if failed {
		s.log.Error("filter object", // s.log carries the binding and the monitor id
			slog.String(logkey.Namespace, e.namespace), slog.String(logkey.Name, e.name), logkey.Err(e.err))
	}
	if queued {
		s.signal()
	}
}

// record updates objects and reports whether ev changed them. A failed
// entry keeps the last good one in place (the reference did too), except
// that a deletion always removes it.
func (s *monitorState) record(ev hook.WatchEvent, e *monitorEntry) bool {
	byName := s.objects[e.namespace]
	if ev == hook.Deleted {
		delete(byName, e.name)
		if len(byName) == 0 {
			delete(s.objects, e.namespace)
		}
		return e.err == nil
	}
	if e.err != nil {
		return false
	}
	if byName == nil {
		byName = make(map[string]*monitorEntry)
		s.objects[e.namespace] = byName
	}
	old := byName[e.name]
	byName[e.name] = e
	return old == nil || old.checksum != e.checksum
}

// queueLocked appends the event for e if the monitor has synced and the
// binding runs on ev.
func (s *monitorState) queueLocked(ev hook.WatchEvent, e *monitorEntry) bool {
	if !s.synced || s.snapshotOnly || !slices.Contains(s.events, ev) {
		return false
	}
	s.pending = append(s.pending, Event{
		ID: s.id, WatchEvent: ev, Namespace: e.namespace, Name: e.name,
		Object: e.object, FilterResult: e.filterResult,
	})
	return true
}

// dropNamespace forgets the objects of namespace ns, which is no longer
// watched, queueing a Deleted event for each, in name order: for the hook
// they left the binding's scope.
func (s *monitorState) dropNamespace(ns string) {
	s.mu.Lock()
	byName := s.objects[ns]
	delete(s.objects, ns)
	queued := false
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		queued = s.queueLocked(hook.Deleted, byName[name]) || queued
	}
	s.mu.Unlock()
	if queued {
		s.signal()
	}
}

// markSynced ends the initial sync: it returns the objects for Start and
// queues events from now on, or returns the first filter failure.
func (s *monitorState) markSynced() ([]hook.FilteredObject, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncErr != nil {
		return nil, s.syncErr
	}
	s.synced = true
	return s.listLocked(), nil
}

// syncObjects returns the current objects and, until enabled, drops the
// held events, which the objects already reflect.
func (s *monitorState) syncObjects() []hook.FilteredObject {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.enabled {
		s.pending = nil
	}
	return s.listLocked()
}

// snapshot returns the current objects sorted by namespace and name.
func (s *monitorState) snapshot() []hook.FilteredObject {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked()
}

func (s *monitorState) listLocked() []hook.FilteredObject {
	n := 0
	for _, byName := range s.objects {
		n += len(byName)
	}
	out := make([]hook.FilteredObject, 0, n)
	for _, ns := range slices.Sorted(maps.Keys(s.objects)) {
		byName := s.objects[ns]
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			e := byName[name]
			out = append(out, hook.FilteredObject{Object: e.object, FilterResult: e.filterResult})
		}
	}
	return out
}

// enable lets deliver send the held events and every later one.
func (s *monitorState) enable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enabled = true
	s.deliverLocked()
}

// signal has the queued events delivered.
func (s *monitorState) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliverLocked()
}

// startDelivery lets events go to out until ctx is done or stopDelivery.
func (s *monitorState) startDelivery(ctx context.Context, out chan<- Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx, s.out = ctx, out
	s.deliverLocked()
}

// stopDelivery ends the delivery and waits for a deliver goroutine that
// runs; call it once ctx is done. No event is sent once it has returned.
func (s *monitorState) stopDelivery() {
	s.mu.Lock()
	s.out = nil
	running := s.delivering
	s.mu.Unlock()
	if running != nil {
		<-running
	}
}

// deliverLocked starts a deliver goroutine when events wait to be sent and
// none runs. The goroutine lives only while there are events, so an idle
// monitor costs none: at a thousand bindings that is a thousand stacks.
func (s *monitorState) deliverLocked() {
	if s.delivering != nil || s.out == nil || !s.enabled || len(s.pending) == 0 {
		return
	}
	done := make(chan struct{})
	s.delivering = done
	go s.deliver(s.ctx, s.out, done)
}

// deliver sends the queued events to out in order, until none is left or
// ctx is done, then closes done. It runs in its own goroutine so informers
// never wait for the receiver.
func (s *monitorState) deliver(ctx context.Context, out chan<- Event, done chan struct{}) {
	defer close(done)
	for {
		s.mu.Lock()
		batch := s.pending
		if len(batch) == 0 || ctx.Err() != nil {
			s.delivering = nil
			s.mu.Unlock()
			return
		}
		s.pending = nil
		s.mu.Unlock()
		for _, ev := range batch {
			select {
			case out <- ev:
			case <-ctx.Done():
			}
		}
	}
}

// objectKey is namespace/name, or name for cluster-scoped objects.
func objectKey(e *monitorEntry) string {
	if e.namespace == "" {
		return e.name
	}
	return e.namespace + "/" + e.name
}
