package monitor

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// TestSnapshotMonitorAdoptedByStart: a snapshot-only monitor keeps the
// objects and sends no event; Start of the same binding takes it over
// without a second List, and its events then flow as for a monitor Start
// started.
func TestSnapshotMonitorAdoptedByStart(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1"}))
	lists := f.countLists("configmaps")
	if err := f.monitors.StartSnapshot(t.Context(), "cms", testBinding()); err != nil {
		t.Fatalf("StartSnapshot: %v", err)
	}
	want := []hook.FilteredObject{{FilterResult: []byte(`"1"`)}}
	if diff := cmp.Diff(want, f.monitors.Snapshot("cms")); diff != "" {
		t.Errorf("snapshot after StartSnapshot (-want +got):\n%s", diff)
	}
	f.monitors.EnableEvents("cms") // must not make a snapshot-only monitor send
	f.put(t, testConfigMap("n", "b", map[string]any{"k": "2"}), true)
	eventually(t, "b in the snapshot", func() bool { return len(f.monitors.Snapshot("cms")) == 2 })
	select {
	case ev := <-f.events:
		t.Fatalf("snapshot-only monitor sent %s %s", ev.WatchEvent, ev.Name)
	default:
	}
	if err := f.monitors.StartSnapshot(t.Context(), "cms", testBinding()); err != nil {
		t.Errorf("StartSnapshot of a running id: %v, want nil", err)
	}

	objects, err := f.monitors.Start(t.Context(), "cms", testBinding())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	want = []hook.FilteredObject{{FilterResult: []byte(`"1"`)}, {FilterResult: []byte(`"2"`)}}
	if diff := cmp.Diff(want, objects); diff != "" {
		t.Errorf("Start's objects (-want +got):\n%s", diff)
	}
	if got := lists.Load(); got != 1 {
		t.Errorf("List requests = %d, want 1: Start adopts the snapshot monitor", got)
	}
	f.monitors.StopSnapshot("cms") // adopted: no longer a snapshot monitor
	f.put(t, testConfigMap("n", "a", map[string]any{"k": "3"}), false)
	f.monitors.EnableEvents("cms")
	if ev := f.next(t); ev.WatchEvent != hook.Modified || ev.Name != "a" || string(ev.FilterResult) != `"3"` {
		t.Fatalf("event = %+v, want Modified a with filterResult \"3\"", ev)
	}
}

// TestSnapshotMonitorReplacedOrStopped: Start of another binding under the
// id lists afresh; StopSnapshot stops only snapshot-only monitors.
func TestSnapshotMonitorReplacedOrStopped(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1", "j": "x"}))
	if err := f.monitors.StartSnapshot(t.Context(), "cms", testBinding()); err != nil {
		t.Fatalf("StartSnapshot: %v", err)
	}
	other := testBinding()
	other.JqFilter = ".data.j"
	objects, err := f.monitors.Start(t.Context(), "cms", other)
	if err != nil {
		t.Fatalf("Start of another binding: %v", err)
	}
	if diff := cmp.Diff([]hook.FilteredObject{{FilterResult: []byte(`"x"`)}}, objects); diff != "" {
		t.Errorf("Start's objects (-want +got):\n%s", diff)
	}
	f.monitors.StopSnapshot("cms")
	if f.monitors.Snapshot("cms") == nil {
		t.Error("StopSnapshot stopped a monitor Start started")
	}

	if err := f.monitors.StartSnapshot(t.Context(), "only", testBinding()); err != nil {
		t.Fatalf("StartSnapshot: %v", err)
	}
	f.monitors.StopSnapshot("only")
	if got := f.monitors.Snapshot("only"); got != nil {
		t.Errorf("snapshot after StopSnapshot = %v, want nil", got)
	}
}
