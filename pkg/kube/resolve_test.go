package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

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

func TestResolve(t *testing.T) {
	ds := Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, Kind: "DaemonSet", Namespaced: true}
	ns := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"}
	cm := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	tests := []struct {
		gvk  schema.GroupVersionKind
		want Resource
	}{
		{schema.GroupVersionKind{Kind: "DaemonSet"}, ds},
		{schema.GroupVersionKind{Kind: "Daemonset"}, ds},
		{schema.GroupVersionKind{Kind: "daemonsets"}, ds},
		{schema.GroupVersionKind{Kind: "DaemonSets"}, ds},
		{schema.GroupVersionKind{Kind: "ds"}, ds},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, ds},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ds"}, ds},
		{schema.GroupVersionKind{Group: "apps", Kind: "DaemonSet"}, ds},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, cm},
		{schema.GroupVersionKind{Kind: "cm"}, cm},
		{schema.GroupVersionKind{Version: "v1", Kind: "namespace"}, ns},
	}
	r := NewDiscovery(testDiscovery(), 0, nil).Resolver()
	for _, tt := range tests {
		t.Run(tt.gvk.String(), func(t *testing.T) {
			got, err := r.Resolve(t.Context(), tt.gvk)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resource (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveRefreshesOnStaleMiss: a kind discovery did not serve is found
// after the cache is past its fresh window, without a reset by the caller.
func TestResolveRefreshesOnStaleMiss(t *testing.T) {
	d := testDiscovery()
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	r := NewDiscovery(d, time.Second, clk).Resolver()
	if _, err := r.Resolve(t.Context(), schema.GroupVersionKind{Kind: "ConfigMap"}); err != nil {
		t.Fatalf("resolve before the CRD: %v", err)
	}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := r.Resolve(t.Context(), widget); !meta.IsNoMatchError(err) {
		t.Fatalf("Resolve of a kind discovery does not serve = %v, want a no-match error", err)
	}
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true, ShortNames: []string{"wg"}, Verbs: []string{"list", "watch"}},
	}})
	if _, err := r.Resolve(t.Context(), schema.GroupVersionKind{Kind: "wg"}); err == nil {
		t.Fatal("a miss within the fresh window refreshed discovery")
	}
	clk.SetTime(clk.Now().Add(time.Second))
	got, err := r.Resolve(t.Context(), schema.GroupVersionKind{Kind: "wg"})
	if err != nil {
		t.Fatalf("resolve after the CRD appeared: %v", err)
	}
	if want := (schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); got.GVR != want {
		t.Errorf("resource = %v, want %v", got.GVR, want)
	}
}

// TestResolveKindNotNamedLikeItsResource: a kind whose singular resource
// name is not its lower-cased name resolves by the exact kind.
func TestResolveKindNotNamedLikeItsResource(t *testing.T) {
	d := testDiscovery()
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "things", SingularName: "thing", Kind: "MyThing", Namespaced: true, Verbs: []string{"list"}},
	}})
	got, err := NewDiscovery(d, 0, nil).Resolver().Resolve(t.Context(), schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "MyThing"})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if want := (schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}); got.GVR != want {
		t.Errorf("resource = %v, want %v", got.GVR, want)
	}
}
