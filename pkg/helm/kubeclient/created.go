package kubeclient

import (
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/resource"
)

// CreatedObject is an object an operation created, at the resource
// version the API server answered the create with.
type CreatedObject struct {
	APIVersion, Kind string
	// Namespace is empty for cluster-scoped kinds.
	Namespace, Name string
	ResourceVersion string
}

// Created collects what Helm's creates of one operation returned; mu
// guards list and infos, which Helm may append to from its create
// goroutines' results. infos are the created objects as Helm holds them
// (live, with their mapping and client), for undoing a first install.
type Created struct {
	mu    sync.Mutex
	list  []CreatedObject
	infos []*resource.Info
}

func (c *Created) add(res *kube.Result) {
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
		c.infos = append(c.infos, info)
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

// Objects returns what was created, in the order of the creates.
func (c *Created) Objects() []CreatedObject {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CreatedObject(nil), c.list...)
}

// Take returns the created objects as Helm holds them and forgets them
// all: what the operation created so far no longer counts as created.
func (c *Created) Take() []*resource.Info {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	infos := c.infos
	c.list, c.infos = nil, nil
	return infos
}
