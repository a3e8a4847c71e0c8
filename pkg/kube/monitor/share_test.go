package monitor

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// countLists counts the List requests for resource from now on.
func (f *monFixture) countLists(resource string) *atomic.Int32 {
	var n atomic.Int32
	f.dynamic.PrependReactor("list", resource, func(clienttesting.Action) (bool, k8sruntime.Object, error) {
		n.Add(1)
		return false, nil, nil
	})
	return &n
}

func (f *monFixture) start(t *testing.T, id string, b hook.KubernetesBinding) []hook.FilteredObject {
	t.Helper()
	objects, err := f.monitors.Start(t.Context(), id, b)
	if err != nil {
		t.Fatalf("Start %s: %v", id, err)
	}
	return objects
}

// until collects the events of the monitors until each has sent one for
// which last holds. A monitor's events come in order, so nothing it sent
// before that one is missed.
func (f *monFixture) until(t *testing.T, last func(Event) bool, ids ...string) map[string][]string {
	t.Helper()
	got := make(map[string][]string)
	done := make(map[string]bool)
	for len(done) < len(ids) {
		ev := f.next(t)
		got[ev.ID] = append(got[ev.ID], fmt.Sprintf("%s %s %s", ev.WatchEvent, ev.Name, ev.FilterResult))
		if last(ev) {
			done[ev.ID] = true
		}
	}
	return got
}

func bindingWith(jq string, keepFull bool) hook.KubernetesBinding {
	b := testBinding()
	b.JqFilter, b.KeepFullObjectsInMemory = jq, keepFull
	return b
}

// Monitors of one watch share its informers whatever their filters: the
// first monitor's own one and one shared by the rest, so two Lists for
// four monitors, and each monitor sees its own filter's results.
func TestMonitorsShareOneWatch(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1", "other": "x"}))
	lists := f.countLists("configmaps")
	bindings := map[string]hook.KubernetesBinding{
		"k": bindingWith(".data.k", false), "other": bindingWith(".data.other", false),
		"full": bindingWith("", true), "k-too": bindingWith(".data.k", false),
	}
	want := map[string][]string{"k": {`"1"`}, "other": {`"x"`}, "full": {""}, "k-too": {`"1"`}}
	for _, id := range []string{"k", "other", "full", "k-too"} {
		objects := f.start(t, id, bindings[id])
		if diff := cmp.Diff(want[id], results(objects)); diff != "" {
			t.Errorf("%s: sync objects (-want +got):\n%s", id, diff)
		}
		if full := len(objects) == 1 && objects[0].Object != nil; full != bindings[id].KeepFullObjectsInMemory {
			t.Errorf("%s: sync object has the full object = %v", id, full)
		}
		f.monitors.EnableEvents(id)
	}
	if got := lists.Load(); got != 2 {
		t.Errorf("List requests = %d, want 2 for four monitors of one watch", got)
	}
	if got := f.monitors.watches.size(); got != 2 {
		t.Errorf("informers = %d, want 2", got)
	}

	f.put(t, testConfigMap("n", "a", map[string]any{"k": "2", "other": "x"}), false)
	f.put(t, testConfigMap("n", "a", map[string]any{"k": "2", "other": "y"}), false)
	if err := f.dynamic.Resource(testGVR).Namespace("n").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := f.until(t, func(ev Event) bool { return ev.WatchEvent == hook.Deleted }, "k", "other", "full", "k-too")
	wantEvents := map[string][]string{
		"k":     {`Modified a "2"`, `Deleted a "2"`},
		"k-too": {`Modified a "2"`, `Deleted a "2"`},
		"other": {`Modified a "y"`, `Deleted a "y"`},
		"full":  {"Modified a ", "Modified a ", "Deleted a "},
	}
	if diff := cmp.Diff(wantEvents, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A monitor joining a shared informer that has synced gets the objects
// it has as its Synchronization list, not as events, and no new List.
func TestMonitorsLateJoinerGetsSyncList(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1"}))
	lists := f.countLists("configmaps")
	f.start(t, "first", testBinding())
	f.start(t, "second", testBinding())
	f.put(t, testConfigMap("n", "b", map[string]any{"k": "2"}), true)
	eventually(t, "b in the shared informer", func() bool { return len(f.monitors.Snapshot("second")) == 2 })

	objects := f.start(t, "late", testBinding())
	if diff := cmp.Diff([]string{`"1"`, `"2"`}, results(objects)); diff != "" {
		t.Errorf("late sync objects (-want +got):\n%s", diff)
	}
	if got := lists.Load(); got != 2 {
		t.Errorf("List requests = %d, want 2: the late monitor joins a synced informer", got)
	}
	f.monitors.EnableEvents("late")
	f.put(t, testConfigMap("n", "c", map[string]any{"k": "3"}), true)
	got := f.until(t, func(ev Event) bool { return ev.Name == "c" }, "late")
	if diff := cmp.Diff(map[string][]string{"late": {`Added c "3"`}}, got); diff != "" {
		t.Errorf("late monitor's events (-want +got):\n%s", diff)
	}
}

// Stopping monitors, the first one's own informer's owner included,
// leaves the others receiving events; the last one stops the informer.
func TestMonitorsStopOneSharer(t *testing.T) {
	f := newMonFixture(t)
	for _, id := range []string{"one", "two", "three"} {
		f.start(t, id, testBinding())
		f.monitors.EnableEvents(id)
	}
	f.monitors.Stop("one") // the owner of the first informer
	f.monitors.Stop("two") // a sharer
	if got := f.monitors.watches.size(); got != 1 {
		t.Errorf("informers after two stops = %d, want the shared one", got)
	}
	f.put(t, testConfigMap("n", "a", map[string]any{"k": "1"}), true)
	got := f.until(t, func(ev Event) bool { return ev.ID == "three" }, "three")
	if diff := cmp.Diff(map[string][]string{"three": {`Added a "1"`}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	f.monitors.Stop("three")
	if got := f.monitors.watches.size(); got != 0 {
		t.Errorf("informers after the last stop = %d, want 0", got)
	}
	// A monitor started now gets an informer of its own again.
	if objects := f.start(t, "four", testBinding()); len(objects) != 1 {
		t.Errorf("sync objects after restart = %v, want a", results(objects))
	}
}

// Monitors that join a shared informer before it has listed all wait for
// its list and get it as their Synchronization, not as events.
func TestMonitorsJoinBeforeTheSharedList(t *testing.T) {
	f := newMonFixture(t, testConfigMap("n", "a", map[string]any{"k": "1"}))
	f.start(t, "owner", testBinding())
	listing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.dynamic.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, k8sruntime.Object, error) {
		once.Do(func() { close(listing) })
		<-release
		return false, nil, nil
	})
	type started struct {
		id      string
		objects []hook.FilteredObject
		err     error
	}
	results := make(chan started, 2)
	startAsync := func(id string) {
		go func() {
			objects, err := f.monitors.Start(t.Context(), id, testBinding())
			results <- started{id, objects, err}
		}()
	}
	startAsync("early")
	<-listing // the shared informer is listing; a second joiner waits too
	eventually(t, "early to join", func() bool { return f.sharedConsumers() == 1 })
	startAsync("also-early")
	eventually(t, "both to join", func() bool { return f.sharedConsumers() == 2 })
	close(release)
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("Start %s: %v", r.id, r.err)
		}
		if diff := cmp.Diff([]hook.FilteredObject{{FilterResult: []byte(`"1"`)}}, r.objects); diff != "" {
			t.Errorf("%s: sync objects (-want +got):\n%s", r.id, diff)
		}
		f.monitors.EnableEvents(r.id)
	}
	f.put(t, testConfigMap("n", "b", map[string]any{"k": "2"}), true)
	got := f.until(t, func(ev Event) bool { return ev.Name == "b" }, "early", "also-early")
	want := map[string][]string{"early": {`Added b "2"`}, "also-early": {`Added b "2"`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// sharedConsumers is the number of consumers of the shared informers.
func (f *monFixture) sharedConsumers() int {
	p := f.monitors.watches
	p.mu.Lock()
	watches := make([]*sharedWatch, 0, len(p.shared))
	for _, w := range p.shared {
		watches = append(watches, w)
	}
	p.mu.Unlock()
	n := 0
	for _, w := range watches {
		w.mu.Lock()
		n += len(w.consumers)
		w.mu.Unlock()
	}
	return n
}

// A list the API server refuses fails the Start of the monitors that
// wait for the shared informer and leaves the running ones watching.
func TestMonitorsSharedListFailureFailsTheJoiners(t *testing.T) {
	f := newMonFixture(t)
	f.start(t, "running", testBinding())
	f.monitors.EnableEvents("running")
	f.dynamic.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	if _, err := f.monitors.Start(t.Context(), "joiner", testBinding()); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("Start on a refused list: err = %v, want the list's error", err)
	}
	eventually(t, "the failed shared informer to stop", func() bool { return f.monitors.watches.size() == 1 })
	f.put(t, testConfigMap("n", "a", map[string]any{"k": "1"}), true)
	got := f.until(t, func(ev Event) bool { return ev.Name == "a" }, "running")
	if diff := cmp.Diff(map[string][]string{"running": {`Added a "1"`}}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func testNamespace(name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// Bindings that follow namespaces by label share the namespace informer
// and the informers of each namespace, and all see a namespace that
// starts to match.
func TestMonitorsFollowNamespacesShare(t *testing.T) {
	f := newMonFixture(t, testNamespace("a", map[string]string{"team": "x"}), testNamespace("b", nil),
		testConfigMap("a", "in-a", map[string]any{"k": "a"}), testConfigMap("b", "in-b", map[string]any{"k": "b"}))
	cmLists, nsLists := f.countLists("configmaps"), f.countLists("namespaces")
	b := testBinding()
	b.Namespace = &hook.NamespaceSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}}
	ids := []string{"f1", "f2", "f3"}
	for _, id := range ids {
		if diff := cmp.Diff([]string{`"a"`}, results(f.start(t, id, b))); diff != "" {
			t.Errorf("%s: sync objects (-want +got):\n%s", id, diff)
		}
		f.monitors.EnableEvents(id)
	}
	if c, n := cmLists.Load(), nsLists.Load(); c != 2 || n != 2 {
		t.Errorf("List requests: configmaps %d, namespaces %d; want 2 each for three monitors", c, n)
	}
	f.waitWatching(t, testNamespaceGVR.Resource)
	if _, err := f.dynamic.Resource(testNamespaceGVR).Update(t.Context(), testNamespace("b", map[string]string{"team": "x"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := f.until(t, func(ev Event) bool { return ev.Name == "in-b" }, ids...)
	want := map[string][]string{"f1": {`Added in-b "b"`}, "f2": {`Added in-b "b"`}, "f3": {`Added in-b "b"`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// BenchmarkMonitorsSameWatch starts 200 monitors, half of them keeping
// full objects, on one watch of 100 ConfigMaps, and reports the live heap
// they hold and the List requests they make.
func BenchmarkMonitorsSameWatch(b *testing.B) {
	const monitors, objects = 200, 100
	for range b.N {
		b.StopTimer()
		f := newMonFixture(b, testConfigMaps(objects)...)
		lists := f.countLists("configmaps")
		before := liveHeap()
		b.StartTimer()
		for i := range monitors {
			bnd := bindingWith(".data.k", i%2 == 0)
			bnd.ExecuteHookOnEvent = []hook.WatchEvent{hook.Added}
			if _, err := f.monitors.Start(b.Context(), fmt.Sprint(i), bnd); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(liveHeap()-before)/(1<<20), "heap-MB")
		b.ReportMetric(float64(lists.Load()), "lists")
		f.stop()
	}
}

// BenchmarkMonitorOneWatchManyObjects is one monitor on 10,000 ConfigMaps:
// the live heap per watched object of a watch no other binding shares.
func BenchmarkMonitorOneWatchManyObjects(b *testing.B) {
	const objects = 10000
	for _, keepFull := range []bool{false, true} {
		b.Run(fmt.Sprintf("keepFull=%v", keepFull), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				f := newMonFixture(b, testConfigMaps(objects)...)
				before := liveHeap()
				b.StartTimer()
				if _, err := f.monitors.Start(b.Context(), "one", bindingWith(".data.k", keepFull)); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(liveHeap()-before)/objects, "heap-B/object")
				f.stop()
			}
		})
	}
}

// testConfigMaps are n ConfigMaps in namespace n with a 512-byte payload.
func testConfigMaps(n int) []k8sruntime.Object {
	out := make([]k8sruntime.Object, 0, n)
	for i := range n {
		out = append(out, testConfigMap("n", fmt.Sprintf("cm-%05d", i), map[string]any{"k": fmt.Sprint(i), "payload": strings.Repeat("x", 512)}))
	}
	return out
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
