package readiness

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// ObjectsFromManifest returns the objects of a release manifest, in the
// order and with the rules of kube.ManifestObjects. created tells that
// the operation whose result is awaited has just created every one of
// them (a fresh install): those that kstatus computes as ready from their
// existence alone are then marked ReadyAsCreated, and Check does not read
// them.
func ObjectsFromManifest(manifest string, created bool) ([]Object, error) {
	objs, err := kube.ManifestObjects(manifest)
	if err != nil || len(objs) == 0 {
		return nil, err //nolint:wrapcheck // the caller names the manifest
	}
	out := make([]Object, 0, len(objs))
	for _, obj := range objs {
		u := unstructured.Unstructured{Object: obj}
		out = append(out, Object{
			APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(),
			ReadyAsCreated: created && readyOnCreate(u),
		})
	}
	return out, nil
}

// readyOnCreate reports whether kstatus computes an object of u's kind
// and spec as Current as soon as it exists: it has no status that a
// controller fills in, so what makes it ready is its creation, which the
// caller has just seen succeed. (A new object has no deletion timestamp,
// kstatus's one other test for these kinds.) A Service of type
// LoadBalancer waits for its address and is read; so is every kind not
// named here.
func readyOnCreate(u unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	switch gk {
	case schema.GroupKind{Kind: "ServiceAccount"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:
		return true
	case schema.GroupKind{Kind: "Service"}:
		typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
		return typ != "LoadBalancer"
	}
	return alwaysReady(gk)
}
