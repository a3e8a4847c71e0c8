package heal

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// testEvents collects what the deletions of a test case send.
type testEvents struct {
	w      *Watcher
	events []Event
}

func (e *testEvents) del(group, kind string, namespaced bool, namespace, name string) {
	gk := schema.GroupKind{Group: group, Kind: kind}
	e.events = append(e.events, e.w.deleted(gk, namespaced, namespace, name)...)
}

// A ConfigMap and a Secret in the release namespace "ops", one of them
// without a namespace in the manifest.
func testObjects() []ObjectRef {
	return []ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "a"},
		{APIVersion: "v1", Kind: "Secret", Namespace: "ops", Name: "s"},
	}
}

// healEvent is the event for a deleted v1 object in the release namespace.
func healEvent(module, kind, name string) Event {
	return Event{Module: module, Object: ObjectRef{APIVersion: "v1", Kind: kind, Namespace: "ops", Name: name}}
}

// healCase is a sequence of calls and deletions and the events they send.
type healCase struct {
	name string
	run  func(w *Watcher, e *testEvents)
	want []Event
}

func runCases(t *testing.T, tests []healCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatcher(t, nil, nil)
			e := &testEvents{w: w}
			tt.run(w, e)
			if diff := cmp.Diff(tt.want, e.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealWatcherOnceAndPause(t *testing.T) {
	runCases(t, []healCase{{
		name: "a deleted object sends one event per module until Watch",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", testObjects())
			e.del("", "ConfigMap", true, "ops", "a")
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "ConfigMap", "a")},
	}, {
		name: "Watch re-arms the event",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", testObjects())
			e.del("", "ConfigMap", true, "ops", "a")
			w.Watch("m1", testObjects())
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "ConfigMap", "a"), healEvent("m1", "Secret", "s")},
	}, {
		name: "deletions while paused send nothing, and do not use up the event",
		run: func(w *Watcher, e *testEvents) {
			w.Pause("m1") // before the first Watch, as around the first install
			w.Watch("m1", testObjects())
			e.del("", "ConfigMap", true, "ops", "a")
			w.Resume("m1")
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "Secret", "s")},
	}, {
		name: "pauses nest and extra resumes are ignored",
		run: func(w *Watcher, e *testEvents) {
			w.Resume("m1")
			w.Watch("m1", testObjects())
			w.Resume("m1")
			w.Pause("m1")
			w.Pause("m1")
			w.Resume("m1")
			e.del("", "ConfigMap", true, "ops", "a")
			w.Resume("m1")
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "Secret", "s")},
	}, {
		name: "Forget drops the objects and the pause count",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", testObjects())
			w.Pause("m1")
			w.Forget("m1")
			e.del("", "ConfigMap", true, "ops", "a")
			w.Watch("m1", testObjects())
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "Secret", "s")},
	}})
}

func TestHealWatcherMatching(t *testing.T) {
	runCases(t, []healCase{{
		name: "objects not in the current list never trigger",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", testObjects())
			w.Watch("m1", testObjects()[1:]) // an upgrade removed the ConfigMap
			e.del("", "ConfigMap", true, "ops", "a")
			e.del("", "ConfigMap", true, "ops", "other")
			e.del("", "Secret", true, "ops", "a")
			e.del("apps", "ConfigMap", true, "ops", "s")
		},
	}, {
		name: "namespaced objects match by namespace",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", testObjects())
			e.del("", "ConfigMap", true, "default", "a")
			e.del("", "Secret", true, "elsewhere", "s")
		},
	}, {
		name: "cluster-scoped objects match whatever namespace the manifest gave",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", []ObjectRef{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "ignored", Name: "r"}})
			e.del("rbac.authorization.k8s.io", "ClusterRole", false, "", "r")
		},
		want: []Event{{Module: "m1", Object: ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"}}},
	}, {
		name: "any version of the group matches",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", []ObjectRef{{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "h"}})
			e.del("autoscaling", "HorizontalPodAutoscaler", true, "ops", "h")
		},
		want: []Event{{Module: "m1", Object: ObjectRef{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Namespace: "ops", Name: "h"}}},
	}, {
		name: "every module listing an object gets an event, in module order",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m2", testObjects())
			w.Watch("m1", testObjects())
			w.Watch("m3", testObjects())
			w.Pause("m3")
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "Secret", "s"), healEvent("m2", "Secret", "s")},
	}, {
		name: "objects with an invalid apiVersion are skipped",
		run: func(w *Watcher, e *testEvents) {
			w.Watch("m1", []ObjectRef{{APIVersion: "a/b/c", Kind: "ConfigMap", Name: "a"}, testObjects()[1]})
			e.del("", "ConfigMap", true, "ops", "a")
			e.del("", "Secret", true, "ops", "s")
		},
		want: []Event{healEvent("m1", "Secret", "s")},
	}})
}

func TestHealWatcherTargets(t *testing.T) {
	w := testWatcher(t, nil, nil)
	w.Watch("m1", testObjects())
	w.Watch("m2", []ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ops", Name: "b"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other", Name: "c"},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"},
	})
	want := map[healTarget]struct{}{
		{kind: schema.GroupKind{Kind: "ConfigMap"}, namespace: "ops"}:                                       {},
		{kind: schema.GroupKind{Kind: "ConfigMap"}, namespace: "other"}:                                     {},
		{kind: schema.GroupKind{Kind: "Secret"}, namespace: "ops"}:                                          {},
		{kind: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, namespace: "ops"}: {},
	}
	if diff := cmp.Diff(want, w.targets(), cmp.AllowUnexported(healTarget{})); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	w.Forget("m2")
	if got := len(w.targets()); got != 2 {
		t.Errorf("targets after Forget = %d, want 2", got)
	}
	// A new Watch replaces the module's objects: the old ones neither count
	// as targets nor send events.
	w.Watch("m1", []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ops", Name: "z"}})
	want = map[healTarget]struct{}{{kind: schema.GroupKind{Kind: "ConfigMap"}, namespace: "ops"}: {}}
	if diff := cmp.Diff(want, w.targets(), cmp.AllowUnexported(healTarget{})); diff != "" {
		t.Errorf("targets after a new Watch (-want +got):\n%s", diff)
	}
	if got := w.deleted(schema.GroupKind{Kind: "ConfigMap"}, true, "ops", "a"); len(got) != 0 {
		t.Errorf("deletion of an object no longer watched: events %v", got)
	}
	if got := w.deleted(schema.GroupKind{Kind: "ConfigMap"}, true, "ops", "z"); len(got) != 1 || got[0].Module != "m1" {
		t.Errorf("deletion of the watched object: events %v, want one for m1", got)
	}
	w.Forget("m1")
	if got := len(w.targets()); got != 0 {
		t.Errorf("targets after every module is forgotten = %d, want 0", got)
	}
}

func TestNewHealWatcherValidates(t *testing.T) {
	valid := testOptions(nil, nil)
	tests := []struct {
		name   string
		change func(o *Options)
	}{
		{"no metadata client", func(o *Options) { o.Metadata = nil }},
		{"no resolver", func(o *Options) { o.Kinds = nil }},
		{"no events", func(o *Options) { o.Events = nil }},
		{"no namespace", func(o *Options) { o.Namespace = "" }},
		{"no module label", func(o *Options) { o.ModuleLabel = "" }},
		{"invalid module label", func(o *Options) { o.ModuleLabel = "a b" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := valid
			tt.change(&opts)
			if _, err := NewWatcher(opts); err == nil {
				t.Error("NewWatcher succeeded")
			}
		})
	}
	if _, err := NewWatcher(valid); err != nil {
		t.Errorf("valid options: %v", err)
	}
}
