package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/monitor"
)

// monitorTimeout bounds every wait for an event or a state.
const monitorTimeout = 30 * time.Second

// monitorEnv is Monitors running on the local control plane until the test
// ends, with the events of all its monitors.
type monitorEnv struct {
	monitors *monitor.Monitors
	client   kubernetes.Interface
	dynamic  dynamic.Interface
	events   chan monitor.Event
	// held keeps events read while waiting for another monitor's, by id.
	held map[string][]monitor.Event
}

func monitorSetup(t *testing.T) *monitorEnv {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &monitorEnv{client: cp.Clientset(t), dynamic: dyn, events: make(chan monitor.Event, 1024), held: map[string][]monitor.Event{}}
	e.monitors, err = monitor.NewMonitors(monitor.Options{Dynamic: dyn, Kinds: kube.NewDiscovery(disc, 0, nil).Resolver(), Events: e.events})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.monitors.Run(t.Context()) }()
	t.Cleanup(func() { // t.Context is cancelled before cleanups run
		if err := <-done; err != nil {
			t.Errorf("monitors: %v", err)
		}
	})
	return e
}

// monitorBinding parses one kubernetes binding written as JSON, the way a
// hook's --config output is parsed.
func monitorBinding(t *testing.T, format string, args ...any) hook.KubernetesBinding {
	t.Helper()
	cfg := fmt.Sprintf(`{"configVersion":"v1","kubernetes":[`+format+`]}`, args...)
	parsed, err := hook.ParseConfig("test", []byte(cfg), hook.Global)
	if err != nil {
		t.Fatalf("parse binding: %v", err)
	}
	return parsed.Kubernetes[0]
}

// start starts monitor id and returns the names of its sync objects, read
// from the objects or, without them, from filter results that are names.
func (e *monitorEnv) start(t *testing.T, id string, b hook.KubernetesBinding) []string {
	t.Helper()
	objects, err := e.monitors.Start(t.Context(), id, b)
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	return monitorNames(t, objects)
}

func monitorNames(t *testing.T, objects []hook.FilteredObject) []string {
	t.Helper()
	names := []string{}
	for _, o := range objects {
		if o.Object == nil {
			var name string
			if err := json.Unmarshal(o.FilterResult, &name); err != nil {
				t.Fatalf("filter result %s is not a name: %v", o.FilterResult, err)
			}
			names = append(names, name)
			continue
		}
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(o.Object, &obj); err != nil {
			t.Fatal(err)
		}
		names = append(names, obj.Metadata.Name)
	}
	return names
}

// next returns the next event of monitor id, keeping other monitors'.
func (e *monitorEnv) next(t *testing.T, id string) monitor.Event {
	t.Helper()
	if held := e.held[id]; len(held) > 0 {
		e.held[id] = held[1:]
		return held[0]
	}
	deadline := time.After(monitorTimeout)
	for {
		select {
		case ev := <-e.events:
			if ev.ID == id {
				return ev
			}
			e.held[ev.ID] = append(e.held[ev.ID], ev)
		case <-deadline:
			t.Fatalf("no event for monitor %s", id)
		}
	}
}

// expect checks that the next event of monitor id is ev for namespace/name.
func (e *monitorEnv) expect(t *testing.T, id string, ev hook.WatchEvent, namespace, name string) monitor.Event {
	t.Helper()
	got := e.next(t, id)
	if got.WatchEvent != ev || got.Namespace != namespace || got.Name != name {
		t.Fatalf("monitor %s: event %s %s/%s, want %s %s/%s", id, got.WatchEvent, got.Namespace, got.Name, ev, namespace, name)
	}
	return got
}

// eventually polls cond until it holds or monitorTimeout passes.
func monitorEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(monitorTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (e *monitorEnv) createCM(t *testing.T, ns, name string, labels, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
	if _, err := e.client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
}

// patchCM merge-patches a ConfigMap.
func (e *monitorEnv) patchCM(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := e.client.CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch configmap %s/%s: %v", ns, name, err)
	}
}

func (e *monitorEnv) deleteCM(t *testing.T, ns, name string) {
	t.Helper()
	if err := e.client.CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap %s/%s: %v", ns, name, err)
	}
}

func (e *monitorEnv) labelNamespace(t *testing.T, ns, labels string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":%s}}`, labels)
	if _, err := e.client.CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("label namespace %s: %v", ns, err)
	}
}

func TestMonitorAddedModifiedDeleted(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.start(t, "all", monitorBinding(t, `{"kind":"ConfigMap","namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	e.start(t, "deleted", monitorBinding(t, `{"kind":"configmaps","executeHookOnEvent":["Deleted"],"jqFilter":".data",
		"keepFullObjectsInMemory":false,"namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns))
	e.monitors.EnableEvents("all")
	e.monitors.EnableEvents("deleted")

	e.createCM(t, ns, "a", nil, map[string]string{"k": "1"})
	added := e.expect(t, "all", hook.Added, ns, "a")
	if got := monitorNames(t, []hook.FilteredObject{{Object: added.Object}}); !slices.Equal(got, []string{"a"}) || added.FilterResult != nil {
		t.Errorf("Added carries object of %v and filterResult %s, want a and none", got, added.FilterResult)
	}
	e.patchCM(t, ns, "a", `{"data":{"k":"2"}}`)
	e.expect(t, "all", hook.Modified, ns, "a")
	e.deleteCM(t, ns, "a")
	deleted := e.expect(t, "all", hook.Deleted, ns, "a")
	if !json.Valid(deleted.Object) {
		t.Errorf("Deleted carries no last state: %s", deleted.Object)
	}
	onlyDeleted := e.expect(t, "deleted", hook.Deleted, ns, "a")
	if onlyDeleted.Object != nil || string(onlyDeleted.FilterResult) != `{"k":"2"}` {
		t.Errorf("Deleted without full objects: object %s, filterResult %s; want none and {\"k\":\"2\"}", onlyDeleted.Object, onlyDeleted.FilterResult)
	}
}

func TestMonitorSelectors(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", map[string]string{"app": "x"}, nil)
	e.createCM(t, ns, "b", map[string]string{"app": "y"}, nil)
	e.createCM(t, ns, "c", nil, nil)
	inNS := fmt.Sprintf(`"namespace":{"nameSelector":{"matchNames":[%q]}}`, ns)
	tests := []struct {
		name, binding string
		want          []string
	}{
		{"names", `"nameSelector":{"matchNames":["c","a"]}`, []string{"a", "c"}},
		{"labels", `"labelSelector":{"matchLabels":{"app":"x"}}`, []string{"a"}},
		{"label expressions", `"labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["x","y"]}]}`, []string{"a", "b"}},
		{"label absent", `"labelSelector":{"matchExpressions":[{"key":"app","operator":"DoesNotExist"}]}`, []string{"c"}},
		{"field equals", `"fieldSelector":{"matchExpressions":[{"field":"metadata.name","operator":"Equals","value":"b"}]}`, []string{"b"}},
		{"field not equals", `"fieldSelector":{"matchExpressions":[{"field":"metadata.name","operator":"!=","value":"b"}]}`, []string{"a", "c"}},
		{"names and labels", `"nameSelector":{"matchNames":["a","b"]},"labelSelector":{"matchLabels":{"app":"y"}}`, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := monitorBinding(t, `{"kind":"ConfigMap",%s,%s}`, tt.binding, inNS)
			if got := e.start(t, tt.name, b); !slices.Equal(got, tt.want) {
				t.Errorf("sync objects = %v, want %v", got, tt.want)
			}
			e.monitors.Stop(tt.name)
		})
	}
}

func TestMonitorObjectsEnterAndLeaveLabelSelector(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", map[string]string{"app": "x"}, nil)
	e.createCM(t, ns, "b", nil, nil)
	b := monitorBinding(t, `{"kind":"cm","labelSelector":{"matchLabels":{"app":"x"}},"namespace":{"nameSelector":{"matchNames":[%q]}}}`, ns)
	if got := e.start(t, "x", b); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("sync objects = %v, want [a]", got)
	}
	e.monitors.EnableEvents("x")
	e.patchCM(t, ns, "b", `{"metadata":{"labels":{"app":"x"}}}`)
	e.expect(t, "x", hook.Added, ns, "b")
	e.patchCM(t, ns, "a", `{"metadata":{"labels":{"app":"y"}}}`)
	e.expect(t, "x", hook.Deleted, ns, "a")
	e.patchCM(t, ns, "b", `{"data":{"k":"v"}}`)
	e.expect(t, "x", hook.Modified, ns, "b")
}

func TestMonitorNamespaceNameSelector(t *testing.T) {
	e := monitorSetup(t)
	watched, other := cp.Namespace(t), cp.Namespace(t)
	e.start(t, "ns", monitorBinding(t, `{"kind":"ConfigMap","namespace":{"nameSelector":{"matchNames":[%q]}}}`, watched))
	e.monitors.EnableEvents("ns")
	e.createCM(t, other, "unseen", nil, nil)
	e.createCM(t, watched, "seen", nil, nil)
	e.expect(t, "ns", hook.Added, watched, "seen")
}

func TestMonitorNamespaceLabelSelector(t *testing.T) {
	e := monitorSetup(t)
	leaving, joining := cp.Namespace(t), cp.Namespace(t)
	label := fmt.Sprintf(`{"monitor-e2e":%q}`, leaving) // unique to this run
	e.labelNamespace(t, leaving, label)
	e.createCM(t, leaving, "in-leaving", nil, nil)
	e.createCM(t, joining, "in-joining", nil, nil)
	b := monitorBinding(t, `{"kind":"ConfigMap","jqFilter":".metadata.name","keepFullObjectsInMemory":false,
		"namespace":{"labelSelector":{"matchLabels":%s}}}`, label)
	if got := e.start(t, "by-label", b); !slices.Equal(got, []string{"in-leaving"}) {
		t.Fatalf("sync objects = %v, want [in-leaving]", got)
	}
	e.monitors.EnableEvents("by-label")

	e.labelNamespace(t, joining, label)
	e.expect(t, "by-label", hook.Added, joining, "in-joining")
	e.labelNamespace(t, leaving, `{"monitor-e2e":null}`)
	e.expect(t, "by-label", hook.Deleted, leaving, "in-leaving")
	e.createCM(t, leaving, "unseen", nil, nil)
	e.createCM(t, joining, "seen", nil, nil)
	e.expect(t, "by-label", hook.Added, joining, "seen")
	if got := monitorNames(t, e.monitors.Snapshot("by-label")); !slices.Equal(got, []string{"in-joining", "seen"}) {
		t.Errorf("snapshot = %v, want [in-joining seen]", got)
	}
}

func TestMonitorStartFails(t *testing.T) {
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	e.createCM(t, ns, "a", nil, map[string]string{"k": "not a number"})
	inNS := fmt.Sprintf(`"namespace":{"nameSelector":{"matchNames":[%q]}}`, ns)
	tests := []struct{ name, binding string }{
		{"field the server cannot select", `"fieldSelector":{"matchExpressions":[{"field":"data.k","operator":"=","value":"1"}]}`},
		{"filter failing on an object", `"jqFilter":".data.k | tonumber"`},
		{"unknown kind", `"apiVersion":"nowhere.example.com/v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.monitors.Start(t.Context(), tt.name, monitorBinding(t, `{"kind":"ConfigMap",%s,%s}`, tt.binding, inNS))
			if err == nil {
				t.Fatal("Start succeeded")
			}
			t.Logf("Start: %v", err)
			if e.monitors.Snapshot(tt.name) != nil {
				t.Error("a failed monitor is still running")
			}
		})
	}
}
