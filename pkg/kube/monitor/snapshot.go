package monitor

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// StartSnapshot starts the monitor id for binding b in snapshot-only mode
// and waits, within ctx, until it has listed every object: it keeps the
// objects (Snapshot answers exactly as for a monitor Start started, same
// filter, same shape) and sends no event, so no hook runs on them. A
// replica that serves webhooks without running hooks uses it for the
// bindings webhooks include in their snapshots.
//
// A later Start of the same id and binding adopts the monitor rather than
// listing again: it returns the objects the monitor holds and from then on
// holds its events until EnableEvents, as for a monitor it started. An id
// already running (snapshot-only or not) is left as it is. Errors are
// those of Start.
func (m *Monitors) StartSnapshot(ctx context.Context, id string, b hook.KubernetesBinding) error {
	if m.get(id) != nil {
		return nil
	}
	_, err := m.start(ctx, id, b, true)
	if errors.Is(err, errIDTaken) {
		return nil // started meanwhile
	}
	if err != nil {
		return fmt.Errorf("start snapshot monitor %q: %w", id, err)
	}
	return nil
}

// StopSnapshot stops the monitor id if it is still in snapshot-only mode
// (no Start adopted it), and waits until it has left its informers.
func (m *Monitors) StopSnapshot(id string) {
	m.mu.Lock()
	mon := m.monitors[id]
	if mon == nil || !mon.state.isSnapshotOnly() {
		m.mu.Unlock()
		return
	}
	delete(m.monitors, id)
	m.mu.Unlock()
	mon.halt()
}

// adopt turns the snapshot-only monitor id into an ordinary one and
// returns its objects, when it has synced and watches b. A snapshot-only
// monitor that watches otherwise (the hook's configuration changed) or
// has not synced yet is stopped, for Start to start afresh.
func (m *Monitors) adopt(id string, b hook.KubernetesBinding) ([]hook.FilteredObject, bool) {
	m.mu.Lock()
	mon := m.monitors[id]
	if mon == nil || !mon.state.isSnapshotOnly() {
		m.mu.Unlock()
		return nil, false
	}
	if reflect.DeepEqual(mon.binding, b) {
		if objects, ok := mon.state.adopt(); ok {
			m.mu.Unlock()
			mon.log.Debug("snapshot monitor adopted")
			return objects, true
		}
	}
	delete(m.monitors, id)
	m.mu.Unlock()
	mon.halt()
	return nil, false
}

// isSnapshotOnly reports whether the monitor queues no events.
func (s *monitorState) isSnapshotOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotOnly
}

// adopt ends snapshot-only mode of a synced monitor and returns its
// objects, as markSynced does: events are queued from now on.
func (s *monitorState) adopt() ([]hook.FilteredObject, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.snapshotOnly || !s.synced {
		return nil, false
	}
	s.snapshotOnly = false
	return s.listLocked(), true
}
