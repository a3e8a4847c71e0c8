package monitor

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// resolve finds the resource of a binding's kind (a kind, plural or short
// name in any case) in apiVersion (any group and version when empty).
func resolve(ctx context.Context, kinds *kube.Resolver, apiVersion, kind string) (kube.Resource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return kube.Resource{}, fmt.Errorf("%w: apiVersion %q: %w", ErrInvalidBinding, apiVersion, err)
	}
	res, err := kinds.Resolve(ctx, gv.WithKind(kind))
	if err != nil {
		return kube.Resource{}, fmt.Errorf("resolve kind %q (apiVersion %q): %w", kind, apiVersion, err)
	}
	return res, nil
}
