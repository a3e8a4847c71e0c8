package kube

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is a kind resolved to the API resource that serves it.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Resolver maps kinds to resources. It is the one place the process does:
// monitors, the patcher, the heal watcher, drift checks and the debug diff
// all resolve through a Discovery's Resolver.
type Resolver struct {
	mapper meta.RESTMapperWithContext
	// memo, when not nil, remembers answers while the cache holds.
	memo *resolved
}

// NewResolver returns a Resolver over mapper. Outside tests, use a
// Discovery's Resolver, whose mapper refreshes on a stale miss.
func NewResolver(mapper meta.RESTMapper) *Resolver {
	return &Resolver{mapper: meta.ToRESTMapperWithContext(mapper)}
}

// Resolver returns the Resolver over the cache's mapper. It remembers
// what it found until the cache is refreshed.
func (d *Discovery) Resolver() *Resolver { return d.resolver }

// Resolve finds the resource that serves gvk. Kind may be a kind as objects
// spell it or a resource name (plural, singular or short, as kubectl takes
// them) in any case. An empty Version means the server's preferred version
// of the group; an empty Group and Version mean any group, the core group
// first. It never resets the mapper: over a Discovery a miss is looked up
// again after a refresh only when the cache is older than its fresh
// window, so kinds of CRDs installed since are found while a burst of
// misses reads discovery once. The error is the mapper's:
// meta.IsNoMatchError tells an unknown kind.
func (r *Resolver) Resolve(ctx context.Context, gvk schema.GroupVersionKind) (Resource, error) {
	if r.memo != nil {
		return r.memo.get(ctx, gvk, r.resolve)
	}
	return r.resolve(ctx, gvk)
}

// resolve asks the mapper.
func (r *Resolver) resolve(ctx context.Context, gvk schema.GroupVersionKind) (Resource, error) {
	mapping, err := r.mapping(ctx, gvk)
	if err != nil {
		return Resource{}, err
	}
	return Resource{
		GVR:        mapping.Resource,
		Kind:       mapping.GroupVersionKind.Kind,
		Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
	}, nil
}

// mapping tries Kind as a resource name first, which also accepts kinds in
// any case, then as the exact kind, for kinds whose resource is not named
// after them.
func (r *Resolver) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mapper := r.mapper
	partial := gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind))
	full, err := mapper.KindForWithContext(ctx, partial)
	if err == nil {
		return mapper.RESTMappingWithContext(ctx, full.GroupKind(), full.Version)
	}
	if !meta.IsNoMatchError(err) {
		return nil, err
	}
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	return mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), versions...)
}
