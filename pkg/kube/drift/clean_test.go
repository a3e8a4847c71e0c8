package drift

import (
	"maps"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// fakeWatched answers resource versions from a map keyed by name.
type fakeWatched struct {
	mu  sync.Mutex
	rvs map[string]string
}

func (f *fakeWatched) ResourceVersion(_ schema.GroupResource, _, name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rv, ok := f.rvs[name]
	return rv, ok
}

func (f *fakeWatched) set(name, rv string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rvs[name] = rv
}

// TestDriftCheckSkipsUnchanged: an object found without drift is not read
// again while its resource version and manifest stay the same; a drifted
// one is read every time.
func TestDriftCheckSkipsUnchanged(t *testing.T) {
	const manifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: clean}
data: {key: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: edited}
data: {key: v}
`
	checker, client := driftFake(t,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: clean, namespace: ns, resourceVersion: "5"}, data: {key: v}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: edited, namespace: ns, resourceVersion: "6"}, data: {key: changed}}`)
	watched := &fakeWatched{rvs: map[string]string{"clean": "5", "edited": "6"}}
	checker = checker.WithWatched(watched)
	reads := countReads(client)
	check := func(m string) int {
		t.Helper()
		drifts, err := checker.Check(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		return len(drifts)
	}
	for range 2 {
		if n := check(manifest); n != 1 {
			t.Fatalf("%d drifts, want 1 (edited)", n)
		}
	}
	// Changed in the cluster: read again.
	cms := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
	live, err := cms.Get(t.Context(), "clean", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("9")
	if _, err := cms.Update(t.Context(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	watched.set("clean", "9")
	check(manifest)
	check(manifest)                                                                     // its new version was clean: not read
	check("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: clean}\ndata: {key: w}\n") // a new manifest: read again
	if reads := reads(); reads["clean"] != 4 || reads["edited"] != 4 {
		t.Errorf("reads %v, want clean 4 (first check, the test's own read, changed version, new manifest), edited 4 (every check)", reads)
	}
}

// TestDriftSeedSkipsTheFirstRead: objects an install created are clean at
// the version it created them with; only a later version, or an object
// not seeded, is read.
func TestDriftSeedSkipsTheFirstRead(t *testing.T) {
	const manifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: made}
data: {key: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data: {key: v}
`
	checker, client := driftFake(t,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: made, namespace: ns, resourceVersion: "7"}, data: {key: v}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: ns, resourceVersion: "3"}, data: {key: v}}`)
	watched := &fakeWatched{rvs: map[string]string{"made": "7", "other": "3"}}
	checker = checker.WithWatched(watched)
	reads := countReads(client)
	created := map[Object]string{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "made"}: "7"}
	if err := checker.Seed(t.Context(), manifest, created); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if _, err := checker.Check(t.Context(), manifest); err != nil {
		t.Fatal(err)
	}
	watched.set("made", "8") // changed since the install
	if _, err := checker.Check(t.Context(), manifest); err != nil {
		t.Fatal(err)
	}
	if reads := reads(); reads["made"] != 1 || reads["other"] != 1 {
		t.Errorf("reads %v, want made 1 (only once changed since its creation), other 1 (not seeded: first check)", reads)
	}
}

// countReads counts the GETs of ConfigMaps on client by name; the returned
// function copies the counts so far.
func countReads(client *dynamicfake.FakeDynamicClient) func() map[string]int {
	var mu sync.Mutex
	reads := map[string]int{}
	client.PrependReactor("get", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		reads[a.(clienttesting.GetAction).GetName()]++
		return false, nil, nil
	})
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(reads)
	}
}
