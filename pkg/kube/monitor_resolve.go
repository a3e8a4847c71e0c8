package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
