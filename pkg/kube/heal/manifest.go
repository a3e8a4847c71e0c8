package heal

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// ObjectsFromManifest returns the references of the objects of a rendered
// release manifest, in the order and with the rules of
// kube.ManifestObjects.
func ObjectsFromManifest(manifest string) ([]ObjectRef, error) {
	objs, err := kube.ManifestObjects(manifest)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	refs := make([]ObjectRef, 0, len(objs))
	for _, obj := range objs {
		u := unstructured.Unstructured{Object: obj}
		refs = append(refs, ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
	}
	return refs, nil
}
