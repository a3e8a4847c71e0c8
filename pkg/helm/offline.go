package helm

import (
	"context"

	"helm.sh/helm/v3/pkg/action"
)

// RenderOffline renders r as Render does, but without a cluster: Helm's
// default capabilities stand in for the API server's and lookup functions
// find nothing. It serves planning and review, where no cluster is at hand;
// checksums it computes may differ from Render's for charts that look at
// capabilities.
func RenderOffline(ctx context.Context, namespace string, r Release) (*Rendered, error) {
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	return renderWith(ctx, cfg, namespace, r, func(install *action.Install) {
		install.ClientOnly = true
		install.Replace = true // no storage to ask whether the name is free
	})
}
