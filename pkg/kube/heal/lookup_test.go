package heal

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestResourceVersion answers from the informers' stores, once they have
// listed: present objects only, in the right resource and namespace.
func TestResourceVersion(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	clusterRoles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	watches := make(chan schema.GroupVersionResource, 16)
	cm := testObject("v1", "ConfigMap", "ops", "a")
	cm.ResourceVersion = "42"
	client := testClient(watches, cm, testObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r"))
	events := make(chan Event, 16)
	opts := testOptions(client, nil)
	opts.Events = events
	w, err := NewWatcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.ResourceVersion(configMaps.GroupResource(), "ops", "a"); ok {
		t.Error("an object is known before any watch runs")
	}
	w.Watch("m1", []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}, {APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"}})
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if err := w.WaitSynced(ctx); err != nil {
		t.Fatalf("WaitSynced: %v", err)
	}
	testWatches(ctx, t, watches, configMaps, clusterRoles)

	type answer struct {
		RV string
		OK bool
	}
	lookup := func(gr schema.GroupResource, ns, name string) answer {
		rv, ok := w.ResourceVersion(gr, ns, name)
		return answer{rv, ok}
	}
	got := []answer{
		lookup(configMaps.GroupResource(), "ops", "a"),
		lookup(configMaps.GroupResource(), "ops", "absent"),
		lookup(configMaps.GroupResource(), "other", "a"),
		lookup(clusterRoles.GroupResource(), "", "r"),
		lookup(schema.GroupResource{Resource: "secrets"}, "ops", "a"),
	}
	want := []answer{{"42", true}, {}, {}, {"", true}, {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	testDelete(t, client, configMaps, "ops", "a")
	testExpect(ctx, t, events, healEvent("m1", "ConfigMap", "a"))
	if a := lookup(configMaps.GroupResource(), "ops", "a"); a.OK {
		t.Errorf("a deleted object is still known: %+v", a)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
