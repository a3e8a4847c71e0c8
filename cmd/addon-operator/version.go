package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// commit is set at build time with -ldflags "-X main.commit=..."; without
// it the VCS revision Go recorded in the binary is shown.
var commit = "" //nolint:gochecknoglobals // set by the linker, as version is

// versionInfo is what version and --version print.
type versionInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	Go         string `json:"go"`
	Helm       string `json:"helm"`
	KubeClient string `json:"kubernetesClient"`
}

func readVersion() versionInfo {
	v := versionInfo{Version: version, Commit: commit, Go: runtime.Version(), Helm: "unknown", KubeClient: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		switch dep.Path {
		case "helm.sh/helm/v3":
			v.Helm = dep.Version
		case "k8s.io/client-go":
			v.KubeClient = dep.Version
		}
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && v.Commit == "" {
			v.Commit = s.Value
		}
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

func (v versionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "addon-operator %s\n", v.Version)
	fmt.Fprintf(&b, "  commit:             %s\n", v.Commit)
	fmt.Fprintf(&b, "  go:                 %s\n", v.Go)
	fmt.Fprintf(&b, "  helm:               %s\n", v.Helm)
	fmt.Fprintf(&b, "  kubernetes client:  %s\n", v.KubeClient)
	return b.String()
}
