package helm

import (
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
)

// CreatedObject is an object an operation created, at the resource
// version the API server answered the create with.
type CreatedObject struct {
	APIVersion, Kind string
	// Namespace is empty for cluster-scoped kinds.
	Namespace, Name string
	ResourceVersion string
}

// createdObjects collects what Helm's creates of one operation returned;
// mu guards list, which Helm may append to from its create goroutines'
// results.
type createdObjects struct {
	mu   sync.Mutex
	list []CreatedObject
}

func (c *createdObjects) add(res *kube.Result) {
	if c == nil || res == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range res.Created {
		m, err := meta.Accessor(info.Object)
		if err != nil || info.Mapping == nil {
			continue
		}
		gvk := info.Mapping.GroupVersionKind
		ns := info.Namespace
		if info.Mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		}
		c.list = append(c.list, CreatedObject{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: ns, Name: info.Name, ResourceVersion: m.GetResourceVersion(),
		})
	}
}

func (c *createdObjects) objects() []CreatedObject {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CreatedObject(nil), c.list...)
}
