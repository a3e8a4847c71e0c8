package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// monTestDiscovery serves core/v1 ConfigMaps and Namespaces and apps/v1
// DaemonSets.
func monTestDiscovery() *fakediscovery.FakeDiscovery {
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

func TestMonitorResolve(t *testing.T) {
	ds := monitorResource{gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, kind: "DaemonSet", namespaced: true}
	ns := monitorResource{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, kind: "Namespace"}
	tests := []struct {
		apiVersion, kind string
		want             monitorResource
	}{
		{"", "DaemonSet", ds},
		{"", "Daemonset", ds},
		{"", "daemonsets", ds},
		{"", "DaemonSets", ds},
		{"", "ds", ds},
		{"apps/v1", "DaemonSet", ds},
		{"apps/v1", "ds", ds},
		{"v1", "ConfigMap", monTestResource()},
		{"", "cm", monTestResource()},
		{"v1", "namespace", ns},
	}
	r := monitorResolver{mapper: NewRESTMapper(monTestDiscovery())}
	for _, tt := range tests {
		t.Run(tt.apiVersion+" "+tt.kind, func(t *testing.T) {
			got, err := r.resolve(tt.apiVersion, tt.kind)
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(monitorResource{})); diff != "" {
				t.Errorf("resource (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMonitorResolveRefreshesOnMiss(t *testing.T) {
	d := monTestDiscovery()
	r := monitorResolver{mapper: NewRESTMapper(d)}
	if _, err := r.resolve("", "ConfigMap"); err != nil {
		t.Fatalf("resolve before the CRD: %v", err)
	}
	if _, err := r.resolve("example.com/v1", "Widget"); err == nil {
		t.Fatal("resolved a kind discovery does not serve")
	}
	d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true, ShortNames: []string{"wg"}, Verbs: []string{"list", "watch"}},
	}})
	got, err := r.resolve("", "wg")
	if err != nil {
		t.Fatalf("resolve after the CRD appeared: %v", err)
	}
	if want := (schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}); got.gvr != want {
		t.Errorf("resource = %v, want %v", got.gvr, want)
	}
}
