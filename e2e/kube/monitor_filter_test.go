package kube

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

func TestMonitorJqFilterDropsUnchangedModified(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", nil, map[string]string{"k": "1", "other": "1"})
	objects, err := e.monitors.Start(t.Context(), "jq", monitorBinding(t, `{"kind":"ConfigMap","jqFilter":".data.k",
		"keepFullObjectsInMemory":false,"namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 1 || objects[0].Object != nil || string(objects[0].FilterResult) != `"1"` {
		t.Fatalf("sync objects = %v, want one with filterResult \"1\" and no object", objects)
	}
	e.monitors.EnableEvents("jq")
	e.patchCM(t, ns, "a", `{"metadata":{"annotations":{"note":"x"}}}`)
	e.patchCM(t, ns, "a", `{"data":{"other":"2"}}`)
	e.patchCM(t, ns, "a", `{"data":{"k":"2"}}`)
	ev := e.expect(t, "jq", hook.Modified, ns, "a")
	if string(ev.FilterResult) != `"2"` || ev.Object != nil {
		t.Errorf("Modified: filterResult %s, object %s; want \"2\" and none", ev.FilterResult, ev.Object)
	}
}

// Without a jqFilter a write that changes only resourceVersion and
// managedFields (another manager applying the same values) is no change.
func TestMonitorWithoutFilterIgnoresMetadataNoise(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	e.start(t, "plain", monitorBinding(t, `{"kind":"ConfigMap","namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	e.monitors.EnableEvents("plain")

	before, err := e.client.CoreV1().ConfigMaps(ns).Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apply := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":%q},"data":{"k":"1"}}`, ns)
	after, err := e.client.CoreV1().ConfigMaps(ns).Patch(t.Context(), "a", types.ApplyPatchType, []byte(apply),
		metav1.PatchOptions{FieldManager: "another-manager"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if after.ResourceVersion == before.ResourceVersion {
		t.Fatal("the apply wrote nothing; the test proves nothing")
	}
	e.patchCM(t, ns, "a", `{"data":{"k":"2"}}`)
	ev := e.expect(t, "plain", hook.Modified, ns, "a")
	if !strings.Contains(string(ev.Object), `"k":"2"`) {
		t.Errorf("the first Modified is not the data change: %s", ev.Object)
	}
}

func TestMonitorSnapshotFollowsTheCluster(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "b", nil, nil)
	e.createCM(t, ns, "a", nil, nil)
	b := monitorBinding(t, `{"kind":"ConfigMap","jqFilter":".metadata.name","keepFullObjectsInMemory":false,
		"executeHookOnEvent":[],"namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns)
	if got := e.start(t, "snap", b); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("sync objects = %v, want [a b]", got)
	}
	e.createCM(t, ns, "c", nil, nil)
	e.deleteCM(t, ns, "a")
	monitorEventually(t, "snapshot [b c]", func() bool {
		return slices.Equal(monitorNames(t, e.monitors.Snapshot("snap")), []string{"b", "c"})
	})
	for _, o := range e.monitors.Snapshot("snap") {
		if o.Object != nil {
			t.Errorf("snapshot keeps a full object: %s", o.Object)
		}
	}
}

func TestMonitorHoldsEventsUntilEnabled(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.start(t, "held", monitorBinding(t, `{"kind":"ConfigMap","namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	e.createCM(t, ns, "a", nil, nil)
	e.patchCM(t, ns, "a", `{"data":{"k":"v"}}`)
	monitorEventually(t, "the change in the snapshot", func() bool {
		s := e.monitors.Snapshot("held")
		return len(s) == 1 && strings.Contains(string(s[0].Object), `"k":"v"`)
	})
	select {
	case ev := <-e.events:
		t.Fatalf("event %s %s before EnableEvents", ev.WatchEvent, ev.Name)
	default:
	}
	e.monitors.EnableEvents("held")
	e.expect(t, "held", hook.Added, ns, "a")
	e.expect(t, "held", hook.Modified, ns, "a")
}

func TestMonitorSyncObjectsReplaceHeldEvents(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.start(t, "sync", monitorBinding(t, `{"kind":"ConfigMap","namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	e.createCM(t, ns, "a", nil, nil)
	e.patchCM(t, ns, "a", `{"data":{"k":"v"}}`)
	monitorEventually(t, "the change in the snapshot", func() bool {
		s := e.monitors.Snapshot("sync")
		return len(s) == 1 && strings.Contains(string(s[0].Object), `"k":"v"`)
	})
	objects := e.monitors.SyncObjects("sync")
	if len(objects) != 1 || !strings.Contains(string(objects[0].Object), `"k":"v"`) {
		t.Fatalf("sync objects = %s, want a with k=v", objects)
	}
	e.monitors.EnableEvents("sync")
	e.patchCM(t, ns, "a", `{"data":{"k":"w"}}`)
	ev := e.expect(t, "sync", hook.Modified, ns, "a")
	if !strings.Contains(string(ev.Object), `"k":"w"`) {
		t.Errorf("first event after SyncObjects is not the new change: %s", ev.Object)
	}
}

// monitorWidgetCRD is a namespaced CRD of this test file's own, kind Widget,
// short name wdg.
func monitorWidgetCRD() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets.monitor.example.com"},
		"spec": map[string]any{
			"group": "monitor.example.com",
			"scope": "Namespaced",
			"names": map[string]any{
				"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": []any{"wdg"},
			},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

func TestMonitorFindsCRDInstalledAfterStart(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	inNS := fmt.Sprintf(`"namespace":{"nameSelector":{"matchNames":[%q]}}`, ns)
	e.start(t, "cms", monitorBinding(t, `{"kind":"ConfigMap",%s}`, inNS)) // fills the discovery cache

	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	_, err := e.dynamic.Resource(crds).Create(t.Context(), monitorWidgetCRD(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create CRD: %v", err)
	}
	// Discovery serves the new kind shortly after the CRD is established;
	// each failed Start refreshes the discovery cache.
	var objects []hook.FilteredObject
	monitorEventually(t, "the Widget kind to resolve", func() bool {
		var err error
		objects, err = e.monitors.Start(t.Context(), "widgets", monitorBinding(t, `{"apiVersion":"monitor.example.com/v1","kind":"wdg",%s}`, inNS))
		return err == nil
	})
	if len(objects) != 0 {
		t.Errorf("sync objects = %d, want none", len(objects))
	}
	for _, kind := range []string{"Widget", "widgets", "WIDGET"} {
		if _, err := e.monitors.Start(t.Context(), "kind "+kind, monitorBinding(t, `{"kind":%q,%s}`, kind, inNS)); err != nil {
			t.Errorf("kind %s: %v", kind, err)
		}
	}
	e.monitors.EnableEvents("widgets")
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitor.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns},
	}}
	gvr := schema.GroupVersionResource{Group: "monitor.example.com", Version: "v1", Resource: "widgets"}
	if _, err := e.dynamic.Resource(gvr).Namespace(ns).Create(t.Context(), widget, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	e.expect(t, "widgets", hook.Added, ns, "w1")
}
