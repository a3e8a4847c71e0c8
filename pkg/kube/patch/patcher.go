// Package patch applies the object operations hooks write to
// KUBERNETES_PATCH_PATH (parsed by pkg/hook) to the cluster.
package patch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Patcher applies the object operations hooks request. It holds no state of
// its own and is safe for concurrent use.
type Patcher struct {
	client dynamic.Interface
	kinds  *kube.Resolver
	log    *slog.Logger
}

// NewPatcher returns a Patcher that writes through client and resolves kinds
// with kinds (share the process's Discovery's, so that kinds whose CRDs
// were installed since are found).
func NewPatcher(client dynamic.Interface, kinds *kube.Resolver, log *slog.Logger) *Patcher {
	return &Patcher{client: client, kinds: kinds, log: log}
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
func (p *Patcher) Apply(ctx context.Context, ops []operation.Operation) error {
	for i := range ops {
		if err := p.apply(ctx, ops[i]); err != nil {
			return fmt.Errorf("operation %d (%s): %w", i, ops[i], err)
		}
	}
	return nil
}

func (p *Patcher) apply(ctx context.Context, op operation.Operation) error {
	switch {
	case op.Type.IsCreate():
		return p.create(ctx, op)
	case op.Type.IsDelete():
		return p.delete(ctx, op)
	case op.Type == operation.MergePatch || op.Type == operation.JSONPatch:
		return p.patch(ctx, op)
	case op.Type == operation.JQPatch:
		return p.jqPatch(ctx, op)
	default:
		return fmt.Errorf("unknown operation %q", op.Type)
	}
}

// resource resolves kind (in apiVersion, or the server's preferred version
// when empty) to the client of its resource, namespaced when the kind is.
func (p *Patcher) resource(ctx context.Context, apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("resolve kind: %w", err)
	}
	r, err := p.kinds.Resolve(ctx, gv.WithKind(kind))
	if err != nil {
		return nil, fmt.Errorf("resolve kind: %w", err)
	}
	res := p.client.Resource(r.GVR)
	if !r.Namespaced {
		return res, nil
	}
	if namespace == "" {
		return nil, fmt.Errorf("%s is namespaced: namespace is required", r.Kind)
	}
	return res.Namespace(namespace), nil
}

// subresources turns an optional subresource into the variadic argument
// of the dynamic client.
func subresources(subresource string) []string {
	if subresource == "" {
		return nil
	}
	return []string{subresource}
}

// isMissing reports whether err says that the object name does not
// exist. A 404 for a subresource the kind does not have names no object and
// is not a missing object.
func isMissing(err error, name string) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details != nil && details.Name == name
}
