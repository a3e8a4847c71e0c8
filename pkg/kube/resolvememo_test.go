package kube

import (
	"context"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the lookups that reach the mapper.
type countingMapper struct {
	meta.RESTMapper
	lookups atomic.Int64
}

func (m *countingMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	m.lookups.Add(1)
	return m.RESTMapper.KindFor(r)
}

// TestResolverRemembersUntilRefresh: a kind resolved once is not looked
// up again while the cache holds; after a refresh it is.
func TestResolverRemembersUntilRefresh(t *testing.T) {
	d := NewDiscovery(testDiscovery(), 0, nil)
	mapper := &countingMapper{RESTMapper: d.expand}
	var gen atomic.Uint64
	r := NewResolver(mapper)
	r.memo = &resolved{generation: gen.Load}
	ds := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	for range 50 {
		if _, err := r.Resolve(t.Context(), ds); err != nil {
			t.Fatal(err)
		}
	}
	if got := mapper.lookups.Load(); got != 1 {
		t.Errorf("mapper asked %d times for 50 resolves of one kind, want 1", got)
	}
	gen.Add(1)
	if _, err := r.Resolve(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	if got := mapper.lookups.Load(); got != 2 {
		t.Errorf("mapper asked %d times, want 2: a refresh forgets what was resolved", got)
	}
}

// TestResolverRefreshServesTheNewResource: once the server serves a kind
// differently (a CRD's scope and version changed) and the Discovery is
// refreshed, its Resolver answers with the new resource.
func TestResolverRefreshServesTheNewResource(t *testing.T) {
	fake := testDiscovery()
	fake.Resources = append(fake.Resources, widgets())
	d := NewDiscovery(fake, 0, nil)
	widget := schema.GroupVersionKind{Group: "example.com", Kind: "Widget"}
	got, err := d.Resolver().Resolve(t.Context(), widget)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Namespaced || got.GVR.Version != "v1" {
		t.Fatalf("before: %+v, want namespaced v1 widgets", got)
	}
	fake.Resources[len(fake.Resources)-1] = &metav1.APIResourceList{GroupVersion: "example.com/v2", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: false, Verbs: []string{"list", "watch"}},
	}}
	if got, _ := d.Resolver().Resolve(t.Context(), widget); got.GVR.Version != "v1" {
		t.Fatalf("without a refresh: %+v, want the cache's v1", got)
	}
	d.Refresh()
	got, err = d.Resolver().Resolve(t.Context(), widget)
	if err != nil {
		t.Fatal(err)
	}
	if got.Namespaced || got.GVR.Version != "v2" {
		t.Errorf("after the refresh: %+v, want cluster-scoped v2 widgets", got)
	}
}

// TestResolverMissNotRemembered: a kind not served yet is found once the
// server serves it and the cache refreshes.
func TestResolverMissNotRemembered(t *testing.T) {
	fake := testDiscovery()
	d := NewDiscovery(fake, 0, nil)
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := d.Resolver().Resolve(context.Background(), widget); !meta.IsNoMatchError(err) {
		t.Fatalf("Resolve before the CRD = %v, want a no-match error", err)
	}
	fake.Resources = append(fake.Resources, widgets())
	d.Refresh()
	if _, err := d.Resolver().Resolve(t.Context(), widget); err != nil {
		t.Errorf("Resolve after the CRD and a refresh: %v", err)
	}
}
