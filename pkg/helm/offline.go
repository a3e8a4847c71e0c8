package helm

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeversion"
)

// RenderOffline renders r as Render does, but without a cluster: Helm's
// default capabilities stand in for the API server's and lookup functions
// find nothing. It serves planning and review, where no cluster is at hand;
// checksums it computes may differ from Render's for charts that look at
// capabilities.
func RenderOffline(ctx context.Context, namespace string, r Release) (*Rendered, error) {
	return RenderOfflineWith(ctx, namespace, r, Capabilities{})
}

// Capabilities are what an offline render claims of the cluster, as helm
// template's --kube-version, --api-versions and --include-crds do.
type Capabilities struct {
	// KubeVersion is .Capabilities.KubeVersion ("1.30", "v1.30.2"); empty
	// is kubeversion.Default().
	KubeVersion string
	// APIVersions are added to Helm's default set ("monitoring.coreos.com/v1",
	// "monitoring.coreos.com/v1/ServiceMonitor").
	APIVersions []string
	// IncludeCRDs puts the chart's crds/ into the manifest, first.
	IncludeCRDs bool
}

// RenderOfflineWith renders r as RenderOffline does, with caps.
func RenderOfflineWith(ctx context.Context, namespace string, r Release, caps Capabilities) (*Rendered, error) {
	if caps.KubeVersion == "" {
		caps.KubeVersion = kubeversion.Default()
	}
	kube, err := chartutil.ParseKubeVersion(caps.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kube version %q: %w", caps.KubeVersion, err)
	}
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	return renderWith(ctx, cfg, namespace, r, func(install *action.Install) {
		install.ClientOnly = true
		install.Replace = true // no storage to ask whether the name is free
		install.KubeVersion = kube
		install.APIVersions = caps.APIVersions
		install.IncludeCRDs = caps.IncludeCRDs
	})
}

// ParseSet merges a --set argument (key=value[,key=value], Helm's syntax:
// a.b=c, list[0]=x, values typed as Helm types them) into dest.
func ParseSet(s string, dest map[string]any) error {
	if err := strvals.ParseInto(s, dest); err != nil {
		return fmt.Errorf("--set %q: %w", s, err)
	}
	return nil
}
