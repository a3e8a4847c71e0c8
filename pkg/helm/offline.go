package helm

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
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
	// is DefaultKubeVersion.
	KubeVersion string
	// APIVersions are added to Helm's default set ("monitoring.coreos.com/v1",
	// "monitoring.coreos.com/v1/ServiceMonitor").
	APIVersions []string
	// IncludeCRDs puts the chart's crds/ into the manifest, first.
	IncludeCRDs bool
}

// DefaultKubeVersion is the Kubernetes version offline renders claim when
// no other is given: the one of the Kubernetes client libraries the binary
// is built with, k8s.io/client-go (else k8s.io/api) v0.X.Y read as
// v1.X.Y, so that it follows the build instead of Helm's default (v1.20).
// A binary without module information (a test binary) claims
// builtKubeVersion.
func DefaultKubeVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return builtKubeVersion
	}
	if v := kubeVersionOfBuild(info); v != "" {
		return v
	}
	return builtKubeVersion
}

// builtKubeVersion is the version of Kubernetes that the go.mod's
// k8s.io/client-go requirement stands for; a test checks it against
// go.mod.
const builtKubeVersion = "v1.37.2"

// kubeVersionOfBuild returns the Kubernetes version of the client
// libraries in info, "" when it holds neither or only pseudo-versions.
func kubeVersionOfBuild(info *debug.BuildInfo) string {
	for _, path := range []string{"k8s.io/client-go", "k8s.io/api"} {
		for _, dep := range info.Deps {
			if dep.Path != path {
				continue
			}
			if dep.Replace != nil {
				dep = dep.Replace
			}
			if v := kubeVersionOfLibrary(dep.Version); v != "" {
				return v
			}
		}
	}
	return ""
}

// kubeVersionOfLibrary reads a Kubernetes library version v0.X.Y (a
// release: not a pre-release, not a pseudo-version) as the Kubernetes
// version v1.X.Y.
func kubeVersionOfLibrary(v string) string {
	rest, ok := strings.CutPrefix(v, "v0.")
	if !ok {
		return ""
	}
	minor, patch, ok := strings.Cut(rest, ".")
	if !ok || minor == "0" || strings.ContainsAny(patch, "-+") {
		return ""
	}
	return "v1." + minor + "." + patch
}

// RenderOfflineWith renders r as RenderOffline does, with caps.
func RenderOfflineWith(ctx context.Context, namespace string, r Release, caps Capabilities) (*Rendered, error) {
	if caps.KubeVersion == "" {
		caps.KubeVersion = DefaultKubeVersion()
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
