package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

const testTimeout = 10 * time.Second

// step is one informer notification for a state under test.
type step struct {
	ev     hook.WatchEvent
	ns     string
	name   string
	value  string // the filter result; objects with equal values are unchanged
	emit   bool
	broken bool // the filter failed on this object
}

func (s step) entry() *monitorEntry {
	e := &monitorEntry{namespace: s.ns, name: s.name, filterResult: json.RawMessage(`"` + s.value + `"`)}
	copy(e.checksum[:], s.value)
	if s.broken {
		e.filterResult, e.err = nil, errors.New("boom")
	}
	return e
}

// monEvent is what a test compares of a Event.
type monEvent struct {
	Event        hook.WatchEvent
	Key          string
	FilterResult string
}

func monPending(s *monitorState) []monEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil
	}
	out := make([]monEvent, 0, len(s.pending))
	for _, ev := range s.pending {
		out = append(out, monEvent{ev.WatchEvent, ev.Namespace + "/" + ev.Name, string(ev.FilterResult)})
	}
	return out
}

func results(objs []hook.FilteredObject) []string {
	if len(objs) == 0 {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, string(o.FilterResult))
	}
	return out
}

// stateCase feeds steps to a state and checks what it queued and holds.
type stateCase struct {
	name     string
	events   []hook.WatchEvent
	before   []step // before the initial sync
	after    []step
	want     []monEvent
	snapshot []string
}

func stateCases() []stateCase {
	all := []hook.WatchEvent{hook.Added, hook.Modified, hook.Deleted}
	return []stateCase{
		{
			name:     "initial list and early changes are the sync list, not events",
			events:   all,
			before:   []step{{ev: hook.Added, ns: "n", name: "a", value: "1"}, {ev: hook.Modified, ns: "n", name: "a", value: "2", emit: true}},
			snapshot: []string{`"2"`},
		},
		{
			name:   "added, modified, deleted",
			events: all,
			after: []step{
				{ev: hook.Added, ns: "n", name: "a", value: "1", emit: true},
				{ev: hook.Modified, ns: "n", name: "a", value: "2", emit: true},
				{ev: hook.Deleted, ns: "n", name: "a", value: "2", emit: true},
			},
			want: []monEvent{{hook.Added, "n/a", `"1"`}, {hook.Modified, "n/a", `"2"`}, {hook.Deleted, "n/a", `"2"`}},
		},
		{
			name:     "unchanged Modified is dropped",
			events:   all,
			before:   []step{{ev: hook.Added, ns: "n", name: "a", value: "1"}},
			after:    []step{{ev: hook.Modified, ns: "n", name: "a", value: "1", emit: true}},
			snapshot: []string{`"1"`},
		},
		{
			name:     "unchanged Added is dropped",
			events:   all,
			before:   []step{{ev: hook.Added, ns: "n", name: "a", value: "1"}},
			after:    []step{{ev: hook.Added, ns: "n", name: "a", value: "1", emit: true}},
			snapshot: []string{`"1"`},
		},
		{
			name:     "executeHookOnEvent filters events, not the snapshot",
			events:   []hook.WatchEvent{hook.Deleted},
			after:    []step{{ev: hook.Added, ns: "n", name: "a", value: "1", emit: true}, {ev: hook.Added, ns: "n", name: "b", value: "1", emit: true}, {ev: hook.Deleted, ns: "n", name: "a", value: "1", emit: true}},
			want:     []monEvent{{hook.Deleted, "n/a", `"1"`}},
			snapshot: []string{`"1"`},
		},
		{
			name:     "a failed filter keeps the last good entry and sends nothing",
			events:   all,
			before:   []step{{ev: hook.Added, ns: "n", name: "a", value: "1"}},
			after:    []step{{ev: hook.Modified, ns: "n", name: "a", broken: true, emit: true}},
			snapshot: []string{`"1"`},
		},
		{
			name:   "snapshot is sorted by namespace and name",
			events: all,
			before: []step{
				{ev: hook.Added, ns: "n2", name: "a", value: "n2/a"},
				{ev: hook.Added, ns: "n1", name: "b", value: "n1/b"},
				{ev: hook.Added, ns: "n1", name: "a", value: "n1/a"},
			},
			snapshot: []string{`"n1/a"`, `"n1/b"`, `"n2/a"`},
		},
	}
}

func TestMonitorStateEvents(t *testing.T) {
	for _, tt := range stateCases() {
		t.Run(tt.name, func(t *testing.T) {
			s := newMonitorState("id", tt.events, slog.New(slog.DiscardHandler))
			for _, st := range tt.before {
				s.apply(st.ev, st.entry(), st.emit)
			}
			if _, err := s.markSynced(); err != nil {
				t.Fatalf("markSynced: %v", err)
			}
			for _, st := range tt.after {
				s.apply(st.ev, st.entry(), st.emit)
			}
			if diff := cmp.Diff(tt.want, monPending(s)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.snapshot, results(s.snapshot())); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMonitorStateTombstone(t *testing.T) {
	s := newMonitorState("id", []hook.WatchEvent{hook.Deleted}, slog.New(slog.DiscardHandler))
	e := step{ns: "n", name: "a", value: "1"}.entry()
	s.apply(hook.Added, e, false)
	if _, err := s.markSynced(); err != nil {
		t.Fatal(err)
	}
	s.apply(hook.Deleted, cache.DeletedFinalStateUnknown{Key: "n/a", Obj: e}, true)
	if diff := cmp.Diff([]monEvent{{hook.Deleted, "n/a", `"1"`}}, monPending(s)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := s.snapshot(); len(got) != 0 {
		t.Errorf("snapshot after delete = %v, want empty", got)
	}
}

func TestMonitorStateSyncFailsOnBrokenFilter(t *testing.T) {
	s := newMonitorState("id", nil, slog.New(slog.DiscardHandler))
	s.apply(hook.Added, step{ns: "n", name: "a", broken: true}.entry(), false)
	if _, err := s.markSynced(); err == nil {
		t.Fatal("markSynced succeeded with an object the filter failed on")
	}
}

func TestMonitorStateDropNamespace(t *testing.T) {
	s := newMonitorState("id", []hook.WatchEvent{hook.Added, hook.Deleted}, slog.New(slog.DiscardHandler))
	for _, st := range []step{{ns: "gone", name: "b", value: "b"}, {ns: "gone", name: "a", value: "a"}, {ns: "kept", name: "c", value: "c"}} {
		s.apply(hook.Added, st.entry(), false)
	}
	if _, err := s.markSynced(); err != nil {
		t.Fatal(err)
	}
	s.dropNamespace("gone")
	want := []monEvent{{hook.Deleted, "gone/a", `"a"`}, {hook.Deleted, "gone/b", `"b"`}}
	if diff := cmp.Diff(want, monPending(s)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`"c"`}, results(s.snapshot())); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestMonitorStateHoldsEventsUntilEnabled(t *testing.T) {
	s := newMonitorState("id", []hook.WatchEvent{hook.Added}, slog.New(slog.DiscardHandler))
	if _, err := s.markSynced(); err != nil {
		t.Fatal(err)
	}
	out := make(chan Event) // unbuffered: a send happens only when received
	ctx, cancel := context.WithCancel(t.Context())
	s.startDelivery(ctx, out)
	defer func() { cancel(); s.stopDelivery() }()

	s.apply(hook.Added, step{ns: "n", name: "a", value: "1"}.entry(), true)
	s.apply(hook.Added, step{ns: "n", name: "b", value: "2"}.entry(), true)
	select {
	case ev := <-out:
		t.Fatalf("event %s %s/%s delivered before EnableEvents", ev.WatchEvent, ev.Namespace, ev.Name)
	default:
	}
	if got := len(monPending(s)); got != 2 {
		t.Fatalf("held events = %d, want 2", got)
	}
	s.enable()
	s.apply(hook.Added, step{ns: "n", name: "c", value: "3"}.entry(), true)
	for _, want := range []string{"a", "b", "c"} {
		select {
		case ev := <-out:
			if ev.Name != want || ev.ID != "id" {
				t.Fatalf("event for %s of %q, want %s of \"id\"", ev.Name, ev.ID, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("no event for %s", want)
		}
	}
}

func TestMonitorStateSyncObjectsDropsHeldEvents(t *testing.T) {
	s := newMonitorState("id", []hook.WatchEvent{hook.Added, hook.Modified}, slog.New(slog.DiscardHandler))
	if _, err := s.markSynced(); err != nil {
		t.Fatal(err)
	}
	s.apply(hook.Added, step{ns: "n", name: "a", value: "1"}.entry(), true)
	s.apply(hook.Modified, step{ns: "n", name: "a", value: "2"}.entry(), true)
	if diff := cmp.Diff([]string{`"2"`}, results(s.syncObjects())); diff != "" {
		t.Errorf("sync objects (-want +got):\n%s", diff)
	}
	if got := monPending(s); got != nil {
		t.Errorf("held events after syncObjects = %v, want none", got)
	}
	s.enable()
	s.apply(hook.Modified, step{ns: "n", name: "a", value: "3"}.entry(), true)
	s.syncObjects() // enabled: events are no longer dropped
	if diff := cmp.Diff([]monEvent{{hook.Modified, "n/a", `"3"`}}, monPending(s)); diff != "" {
		t.Errorf("events after enable (-want +got):\n%s", diff)
	}
}
