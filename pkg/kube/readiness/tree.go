package readiness

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Node is one object of a release with its kstatus status, as `flux tree`
// lists a Kustomization's objects.
type Node struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is the object's, the release's for a namespaced object
	// the manifest left without one; empty for a cluster-scoped one.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Status is kstatus's: Current, InProgress, Failed, Terminating,
	// NotFound or Unknown (the object could not be read: Message says why).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Statuses reads every object and returns its kstatus status, in the
// order of objects. namespace is the release's, for namespaced objects
// without one. An object that cannot be read or whose kind is not served
// is Unknown with the reason in the message: one such object does not
// hide the others. It fails only when ctx ends.
func (c *Checker) Statuses(ctx context.Context, namespace string, objects []Object) ([]Node, error) {
	out := make([]Node, 0, len(objects))
	for _, obj := range objects {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("object statuses: %w", err)
		}
		out = append(out, c.node(ctx, namespace, obj))
	}
	return out, nil
}

func (c *Checker) node(ctx context.Context, namespace string, obj Object) Node {
	n := Node{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
	unknown := func(err error) Node {
		n.Status, n.Message = status.UnknownStatus.String(), err.Error()
		return n
	}
	gv, err := schema.ParseGroupVersion(obj.APIVersion)
	if err != nil {
		return unknown(fmt.Errorf("apiVersion: %w", err))
	}
	res, err := c.kinds.Resolve(ctx, gv.WithKind(obj.Kind))
	if err != nil {
		return unknown(fmt.Errorf("resolve kind: %w", err))
	}
	var ri dynamic.ResourceInterface = c.dyn.Resource(res.GVR)
	if res.Namespaced {
		if n.Namespace == "" {
			n.Namespace = namespace
		}
		ri = c.dyn.Resource(res.GVR).Namespace(n.Namespace)
	} else {
		n.Namespace = ""
	}
	u, err := ri.Get(ctx, obj.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		n.Status, n.Message = status.NotFoundStatus.String(), "not found"
		return n
	}
	if err != nil {
		return unknown(err)
	}
	r, err := status.Compute(u)
	if err != nil {
		return unknown(fmt.Errorf("compute status: %w", err))
	}
	n.Status, n.Message = r.Status.String(), r.Message
	return n
}
