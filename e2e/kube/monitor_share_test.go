package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// Bindings with one watch and different filters share informers: each
// sees its own filter's results, a binding started later gets the objects
// as its Synchronization, and stopping some leaves the others watching.
func TestMonitorBindingsShareAWatch(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", map[string]string{"app": "x"}, map[string]string{"k": "1", "other": "p"})
	binding := func(extra string) hook.KubernetesBinding {
		return monitorBinding(t, `{"kind":"ConfigMap",%s"labelSelector":{"matchLabels":{"app":"x"}},
			"namespace":{"nameSelector":{"matchNames":[%q]}}}`, extra, ns)
	}
	bindings := map[string]hook.KubernetesBinding{
		"k":     binding(`"jqFilter":".data.k","keepFullObjectsInMemory":false,`),
		"other": binding(`"jqFilter":".data.other","keepFullObjectsInMemory":false,`),
		"full":  binding(""),
	}
	wantSync := map[string]string{"k": `"1"`, "other": `"p"`, "full": ""}
	for _, id := range []string{"k", "other", "full"} {
		objects, err := e.monitors.Start(t.Context(), id, bindings[id])
		if err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		if len(objects) != 1 || string(objects[0].FilterResult) != wantSync[id] || (objects[0].Object != nil) != (id == "full") {
			t.Fatalf("%s: sync objects %+v, want one with filter result %s", id, objects, wantSync[id])
		}
		e.monitors.EnableEvents(id)
	}

	e.patchCM(t, ns, "a", `{"data":{"k":"2"}}`)
	if ev := e.expect(t, "k", hook.Modified, ns, "a"); string(ev.FilterResult) != `"2"` {
		t.Errorf("k: filter result %s, want \"2\"", ev.FilterResult)
	}
	e.expect(t, "full", hook.Modified, ns, "a")
	e.patchCM(t, ns, "a", `{"data":{"other":"q"}}`)
	// "other" saw no change from the first patch: its next event is this one.
	if ev := e.expect(t, "other", hook.Modified, ns, "a"); string(ev.FilterResult) != `"q"` {
		t.Errorf("other: filter result %s, want \"q\"", ev.FilterResult)
	}
	e.expect(t, "full", hook.Modified, ns, "a")
	e.createCM(t, ns, "b", map[string]string{"app": "x"}, map[string]string{"k": "3"})
	for _, id := range []string{"k", "other", "full"} {
		e.expect(t, id, hook.Added, ns, "b")
	}

	late, err := e.monitors.Start(t.Context(), "late", bindings["k"])
	if err != nil {
		t.Fatalf("start late: %v", err)
	}
	got := make([]string, 0, len(late))
	for _, o := range late {
		got = append(got, string(o.FilterResult))
	}
	if diff := cmp.Diff([]string{`"2"`, `"3"`}, got); diff != "" {
		t.Errorf("late sync objects (-want +got):\n%s", diff)
	}
	e.monitors.EnableEvents("late")
	e.monitors.Stop("k")
	e.monitors.Stop("other")
	e.deleteCM(t, ns, "a")
	// The late monitor's first event is this one: a and b came in its
	// Synchronization, not as events.
	e.expect(t, "late", hook.Deleted, ns, "a")
	e.expect(t, "full", hook.Deleted, ns, "a")
}
