package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// NewRESTMapper returns a mapper over d's discovery information, cached in
// memory until Reset. It also expands short names (ds, cm) and accepts
// singular resource names, so every spelling a binding's kind may use
// resolves.
func NewRESTMapper(d discovery.DiscoveryInterface) meta.ResettableRESTMapper {
	cached := memory.NewMemCacheClient(d)
	deferred := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	return monMapper{RESTMapper: restmapper.NewShortcutExpander(deferred, cached, nil), reset: deferred.Reset}
}

// monMapper is a short-name expanding mapper whose Reset drops the shared
// discovery cache.
type monMapper struct {
	meta.RESTMapper
	reset func()
}

// Reset makes the next lookup read discovery again.
func (m monMapper) Reset() { m.reset() }

// monitorResource is a binding's kind resolved to an API resource.
type monitorResource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

// monitorResolver resolves the apiVersion and kind of bindings.
type monitorResolver struct {
	mapper meta.ResettableRESTMapper
}

// resolve finds the resource for kind (a kind, plural or short name in any
// case) in apiVersion (any group and version when empty). A miss resets the
// mapper's discovery cache and tries once more, so kinds of CRDs installed
// since the cache was filled are found.
func (r monitorResolver) resolve(apiVersion, kind string) (monitorResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return monitorResource{}, fmt.Errorf("%w: apiVersion %q: %w", ErrInvalidBinding, apiVersion, err)
	}
	partial := gv.WithResource(strings.ToLower(kind))
	gvk, err := r.mapper.KindFor(partial)
	if meta.IsNoMatchError(err) {
		r.mapper.Reset()
		gvk, err = r.mapper.KindFor(partial)
	}
	if err != nil {
		return monitorResource{}, fmt.Errorf("resolve kind %q (apiVersion %q): %w", kind, apiVersion, err)
	}
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return monitorResource{}, fmt.Errorf("resolve kind %q (apiVersion %q): %w", kind, apiVersion, err)
	}
	return monitorResource{
		gvr:        mapping.Resource,
		kind:       gvk.Kind,
		namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}
