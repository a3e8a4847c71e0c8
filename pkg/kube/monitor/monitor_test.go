package monitor

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

var (
	testGVR          = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"} //nolint:gochecknoglobals // constant test fixture
	testNamespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"} //nolint:gochecknoglobals // constant test fixture
)

// monFixture is Monitors over client-go's fake dynamic client, running
// until the test ends.
type monFixture struct {
	monitors *Monitors
	dynamic  *dynamicfake.FakeDynamicClient
	events   chan Event
	cancel   context.CancelFunc
	done     chan error
	// lists and watches count the List requests made and the watches
	// open, by resource: an informer has listed, then its watch is open.
	mu      sync.Mutex
	lists   map[string]int
	watches map[string]int
}

// count adds one to n[resource] under mu.
func (f *monFixture) count(n map[string]int, resource string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n[resource]++
}

// waitWatching waits until every informer of resource that has listed
// also has its watch open. The fake client's watches start from now, not
// from the list's resourceVersion as the API server's do, so a write
// before that would never reach the informer.
func (f *monFixture) waitWatching(t *testing.T, resource string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, testTimeout, true, func(context.Context) (bool, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.watches[resource] >= f.lists[resource], nil
	})
	if err != nil {
		t.Fatalf("watches of %s not open: %v", resource, err)
	}
}

func newMonFixture(tb testing.TB, objects ...k8sruntime.Object) *monFixture {
	tb.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{testGVR: "ConfigMapList", testNamespaceGVR: "NamespaceList"}, objects...)
	f := &monFixture{dynamic: dyn, events: make(chan Event, 16), done: make(chan error, 1), lists: map[string]int{}, watches: map[string]int{}}
	dyn.PrependReactor("list", "*", func(a clienttesting.Action) (bool, k8sruntime.Object, error) {
		f.count(f.lists, a.GetResource().Resource)
		return false, nil, nil
	})
	dyn.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if wa, ok := a.(clienttesting.WatchActionImpl); ok {
			opts = wa.ListOptions
		}
		w, err := dyn.Tracker().Watch(a.GetResource(), a.GetNamespace(), opts)
		if err == nil {
			f.count(f.watches, a.GetResource().Resource)
		}
		return true, w, err
	})
	m, err := NewMonitors(Options{Dynamic: dyn, Kinds: kube.NewDiscovery(testDiscovery(), 0, nil).Resolver(), Events: f.events})
	if err != nil {
		tb.Fatalf("NewMonitors: %v", err)
	}
	f.monitors = m
	ctx, cancel := context.WithCancel(tb.Context())
	f.cancel = cancel
	go func() { f.done <- m.Run(ctx) }()
	tb.Cleanup(f.stop)
	return f
}

// stop ends Run and waits for it; it may be called more than once.
func (f *monFixture) stop() {
	f.cancel()
	if err, ok := <-f.done; ok {
		close(f.done)
		if err != nil {
			panic(err) // Run never fails after it started
		}
	}
}

func (f *monFixture) put(t *testing.T, obj *unstructured.Unstructured, create bool) {
	t.Helper()
	f.waitWatching(t, testGVR.Resource)
	res := f.dynamic.Resource(testGVR).Namespace(obj.GetNamespace())
	var err error
	if create {
		_, err = res.Create(t.Context(), obj, metav1.CreateOptions{})
	} else {
		_, err = res.Update(t.Context(), obj, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("write %s: %v", obj.GetName(), err)
	}
}

func (f *monFixture) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev := <-f.events:
		return ev
	case <-time.After(testTimeout):
		t.Fatal("no monitor event")
		return Event{}
	}
}

// eventually polls cond until it holds or the test timeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func testBinding() hook.KubernetesBinding {
	return hook.KubernetesBinding{
		Name: "cms", Kind: "ConfigMap", JqFilter: ".data.k",
		ExecuteHookOnEvent: []hook.WatchEvent{hook.Added, hook.Modified, hook.Deleted},
	}
}

func TestMonitorsHoldEventsAndDropUnchanged(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1"}))
	objects, err := f.monitors.Start(t.Context(), "cms", testBinding())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	want := []hook.FilteredObject{{FilterResult: []byte(`"1"`)}}
	if diff := cmp.Diff(want, objects); diff != "" {
		t.Errorf("sync objects (-want +got):\n%s", diff)
	}

	f.put(t, testConfigMap("n", "b", map[string]any{"k": "2"}), true)
	eventually(t, "b in the snapshot", func() bool { return len(f.monitors.Snapshot("cms")) == 2 })
	select {
	case ev := <-f.events:
		t.Fatalf("event %s %s before EnableEvents", ev.WatchEvent, ev.Name)
	default:
	}
	f.monitors.EnableEvents("cms")
	if ev := f.next(t); ev.WatchEvent != hook.Added || ev.Name != "b" || string(ev.FilterResult) != `"2"` || ev.Object != nil {
		t.Fatalf("event = %+v, want Added b with filterResult \"2\" and no object", ev)
	}

	// b's filter result stays "2": no event; a's changes: the next event.
	f.put(t, testConfigMap("n", "b", map[string]any{"k": "2", "other": "x"}), false)
	f.put(t, testConfigMap("n", "a", map[string]any{"k": "3"}), false)
	if ev := f.next(t); ev.WatchEvent != hook.Modified || ev.Name != "a" || string(ev.FilterResult) != `"3"` {
		t.Fatalf("event = %+v, want Modified a with filterResult \"3\"", ev)
	}

	if err := f.dynamic.Resource(testGVR).Namespace("n").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := f.next(t); ev.WatchEvent != hook.Deleted || ev.Name != "a" {
		t.Fatalf("event = %+v, want Deleted a", ev)
	}
	want = []hook.FilteredObject{{FilterResult: []byte(`"2"`)}}
	if diff := cmp.Diff(want, f.monitors.Snapshot("cms")); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestMonitorsIDs(t *testing.T) {
	f := newMonFixture(t)
	if _, err := f.monitors.Start(t.Context(), "cms", testBinding()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := f.monitors.Start(t.Context(), "cms", testBinding()); err == nil {
		t.Error("a second monitor with a running id started")
	}
	f.monitors.Stop("cms")
	if got := f.monitors.Snapshot("cms"); got != nil {
		t.Errorf("snapshot of a stopped monitor = %v, want nil", got)
	}
	if _, err := f.monitors.Start(t.Context(), "cms", testBinding()); err != nil {
		t.Errorf("Start after Stop: %v", err)
	}
	f.monitors.Stop("unknown") // ignored
}

func TestMonitorsStartErrors(t *testing.T) {
	f := newMonFixture(t)
	b := testBinding()
	b.JqFilter = ".a | no_such_function"
	if _, err := f.monitors.Start(t.Context(), "bad-jq", b); !errors.Is(err, ErrInvalidBinding) {
		t.Errorf("bad jq: err = %v, want ErrInvalidBinding", err)
	}
	b = testBinding()
	b.Kind = "Gadget"
	if _, err := f.monitors.Start(t.Context(), "unknown-kind", b); err == nil {
		t.Error("unknown kind: no error")
	}
	f.stop()
	if _, err := f.monitors.Start(t.Context(), "late", testBinding()); !errors.Is(err, ErrStopped) {
		t.Errorf("after Run: err = %v, want ErrStopped", err)
	}
}

func TestMonitorsStopEverythingWithRun(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1"}))
	for _, id := range []string{"one", "two", "three"} {
		if _, err := f.monitors.Start(t.Context(), id, testBinding()); err != nil {
			t.Fatalf("Start %s: %v", id, err)
		}
		f.monitors.EnableEvents(id)
	}
	f.monitors.Stop("two")
	f.stop()
	eventually(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}

// testDiscovery serves core/v1 ConfigMaps and Namespaces and apps/v1
// DaemonSets.
func testDiscovery() *fakediscovery.FakeDiscovery {
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: []string{"list", "watch"}},
			{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "daemonsets", SingularName: "daemonset", Kind: "DaemonSet", Namespaced: true, ShortNames: []string{"ds"}, Verbs: []string{"list", "watch"}},
		}},
	}}}
}
