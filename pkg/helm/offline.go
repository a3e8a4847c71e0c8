package helm

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
)

// RenderOffline renders r as Render does, but without a cluster: Helm's
// default capabilities stand in for the API server's and lookup functions
// find nothing. It serves planning and review, where no cluster is at hand;
// checksums it computes may differ from Render's for charts that look at
// capabilities.
func RenderOffline(ctx context.Context, namespace string, r Release) (*Rendered, error) {
	ch, err := loadChart(r.Name, r.ChartDir, r.Values)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	vals, err := copyValues(r.Values)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ReleaseName = r.Name
	install.Namespace = namespace
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.IsUpgrade = true
	install.SkipCRDs = true
	install.DisableOpenAPIValidation = true
	install.PostRenderer = labeler{labels: objectLabels(r.Name)}
	rel, err := install.RunWithContext(ctx, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("render release %q: %w", r.Name, err)
	}
	return newRendered(rel.Manifest, rel.Hooks), nil
}
