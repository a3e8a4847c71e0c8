package kubeclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
)

// TestCreatedObjects: what Helm's create returned is kept with the
// version the server gave each object; a cluster-scoped object has no
// namespace, whatever the client's default.
func TestCreatedObjects(t *testing.T) {
	info := func(gvk schema.GroupVersionKind, scope meta.RESTScope, ns, name, rv string) *resource.Info {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		u.SetResourceVersion(rv)
		return &resource.Info{Name: name, Namespace: ns, Object: u, Mapping: &meta.RESTMapping{GroupVersionKind: gvk, Scope: scope}}
	}
	c := &Created{}
	c.add(&kube.Result{Created: kube.ResourceList{
		info(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace, "ns", "c", "11"),
		info(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot, "ns", "r", "12"),
	}})
	c.add(nil) // a create that failed before any result
	want := []CreatedObject{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c", ResourceVersion: "11"},
		{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r", ResourceVersion: "12"},
	}
	if diff := cmp.Diff(want, c.Objects()); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	var none *Created
	none.add(&kube.Result{Created: kube.ResourceList{info(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace, "ns", "c", "1")}})
	if got := none.Objects(); got != nil {
		t.Errorf("a nil collector kept %v", got)
	}
}
