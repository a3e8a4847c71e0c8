// Package kubeversion is the Kubernetes version the operator's offline
// renders claim when no other is given: that of the Kubernetes client
// libraries the binary is built with.
package kubeversion

import (
	"runtime/debug"
	"strings"
)

// Default is the Kubernetes version offline renders claim when no other
// is given: the one of the Kubernetes client libraries the binary is built
// with, k8s.io/client-go (else k8s.io/api) v0.X.Y read as v1.X.Y, so that
// it follows the build instead of Helm's default (v1.20). A binary without
// module information (a test binary) claims built.
func Default() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return built
	}
	if v := ofBuild(info); v != "" {
		return v
	}
	return built
}

// built is the version of Kubernetes that the go.mod's
// k8s.io/client-go requirement stands for; a test checks it against
// go.mod.
const built = "v1.37.2"

// ofBuild returns the Kubernetes version of the client
// libraries in info, "" when it holds neither or only pseudo-versions.
func ofBuild(info *debug.BuildInfo) string {
	for _, path := range []string{"k8s.io/client-go", "k8s.io/api"} {
		for _, dep := range info.Deps {
			if dep.Path != path {
				continue
			}
			if dep.Replace != nil {
				dep = dep.Replace
			}
			if v := ofLibrary(dep.Version); v != "" {
				return v
			}
		}
	}
	return ""
}

// ofLibrary reads a Kubernetes library version v0.X.Y (a
// release: not a pre-release, not a pseudo-version) as the Kubernetes
// version v1.X.Y.
func ofLibrary(v string) string {
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
