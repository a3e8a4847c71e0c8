package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// Patcher applies the object operations hooks request. It holds no state of
// its own and is safe for concurrent use.
type Patcher struct {
	client dynamic.Interface
	mapper meta.ResettableRESTMapperWithContext
	log    *slog.Logger
}

// NewPatcher returns a Patcher that writes through client and resolves kinds
// with mapper, which it resets once when a kind is unknown, so kinds whose
// CRDs were installed after the mapper was filled are found. A mapper built
// as restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d))
// from a discovery client d does that; it may be shared with monitors.
func NewPatcher(client dynamic.Interface, mapper meta.ResettableRESTMapper, log *slog.Logger) *Patcher {
	return &Patcher{client: client, mapper: meta.ToResettableRESTMapperWithContext(mapper), log: log}
}

// Apply applies ops in order and stops at the first failure; the error names
// the operation by its index in ops and its object, and wraps the API error
// (apierrors.IsAlreadyExists and friends work on it). Operations before the
// failed one stay applied.
//
// Create fails when the object exists; CreateIfNotExists then does nothing;
// CreateOrUpdate replaces it with Update at the live resourceVersion,
// retrying on conflicts (a resourceVersion in the hook's object is never
// used: the server refuses it on create). Deletes ignore missing objects; Delete uses
// foreground propagation and waits (at most 20 s, and not past ctx) until the
// object is gone, DeleteInBackground and DeleteNonCascading return at once.
// MergePatch and JSONPatch are sent as patches; JQPatch reads the object,
// runs the filter and updates it when the result differs, retrying on
// conflicts. Patches of a missing object fail unless IgnoreMissingObject is
// set.
func (p *Patcher) Apply(ctx context.Context, ops []Operation) error {
	for i := range ops {
		if err := p.apply(ctx, ops[i]); err != nil {
			return fmt.Errorf("operation %d (%s): %w", i, ops[i], err)
		}
	}
	return nil
}

func (p *Patcher) apply(ctx context.Context, op Operation) error {
	switch {
	case op.Type.isCreate():
		return p.create(ctx, op)
	case op.Type.isDelete():
		return p.delete(ctx, op)
	case op.Type == OpMergePatch || op.Type == OpJSONPatch:
		return p.patch(ctx, op)
	case op.Type == OpJQPatch:
		return p.jqPatch(ctx, op)
	default:
		return fmt.Errorf("unknown operation %q", op.Type)
	}
}

// resource resolves kind (in apiVersion, or the server's preferred version
// when empty) to the client of its resource, namespaced when the kind is.
func (p *Patcher) resource(ctx context.Context, apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	mapping, err := p.mapping(ctx, apiVersion, kind)
	if meta.IsNoMatchError(err) {
		p.mapper.ResetWithContext(ctx)
		mapping, err = p.mapping(ctx, apiVersion, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve kind: %w", err)
	}
	res := p.client.Resource(mapping.Resource)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return res, nil
	}
	if namespace == "" {
		return nil, fmt.Errorf("%s is namespaced: namespace is required", mapping.GroupVersionKind.Kind)
	}
	return res.Namespace(namespace), nil
}

func (p *Patcher) mapping(ctx context.Context, apiVersion, kind string) (*meta.RESTMapping, error) {
	if apiVersion == "" {
		// Like kubectl: the lower-cased kind is the singular resource name,
		// and the mapper picks the preferred group and version.
		gvk, err := p.mapper.KindForWithContext(ctx, schema.GroupVersionResource{Resource: strings.ToLower(kind)})
		if err != nil {
			return nil, err
		}
		return p.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	return p.mapper.RESTMappingWithContext(ctx, gv.WithKind(kind).GroupKind(), gv.Version)
}

// patchSubresources turns an optional subresource into the variadic argument
// of the dynamic client.
func patchSubresources(subresource string) []string {
	if subresource == "" {
		return nil
	}
	return []string{subresource}
}

// patchIsMissing reports whether err says that the object name does not
// exist. A 404 for a subresource the kind does not have names no object and
// is not a missing object.
func patchIsMissing(err error, name string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details != nil && details.Name == name
}

// patchRetryOnConflict runs fn until it returns anything but a Conflict,
// with client-go's default backoff; when the attempts run out it returns the
// last Conflict.
func patchRetryOnConflict(ctx context.Context, fn func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, retry.DefaultBackoff, func(ctx context.Context) (bool, error) {
		last = fn(ctx)
		if apierrors.IsConflict(last) {
			return false, nil
		}
		return true, last
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return last
	}
	return err
}
