package kubeversion

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

func TestKubeVersionOfBuild(t *testing.T) {
	dep := func(path, version string) *debug.Module { return &debug.Module{Path: path, Version: version} }
	tests := []struct {
		name string
		deps []*debug.Module
		want string
	}{
		{name: "client-go", deps: []*debug.Module{dep("k8s.io/api", "v0.36.1"), dep("k8s.io/client-go", "v0.37.2")}, want: "v1.37.2"},
		{name: "api when client-go is absent", deps: []*debug.Module{dep("k8s.io/api", "v0.36.1")}, want: "v1.36.1"},
		{name: "replaced", deps: []*debug.Module{{Path: "k8s.io/client-go", Version: "v0.30.0", Replace: dep("k8s.io/client-go", "v0.38.1")}}, want: "v1.38.1"},
		{name: "pseudo-version, then api", deps: []*debug.Module{dep("k8s.io/client-go", "v0.0.0-20260101000000-abcdefabcdef"), dep("k8s.io/api", "v0.37.0")}, want: "v1.37.0"},
		{name: "pre-release only", deps: []*debug.Module{dep("k8s.io/client-go", "v0.38.0-rc.1")}, want: ""},
		{name: "neither", deps: []*debug.Module{dep("helm.sh/helm/v3", "v3.22.0")}, want: ""},
	}
	for _, tt := range tests {
		if got := ofBuild(&debug.BuildInfo{Deps: tt.deps}); got != tt.want {
			t.Errorf("%s: ofBuild = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestBuiltKubeVersionFollowsGoMod keeps the version a binary without
// module information claims equal to what go.mod's k8s.io/client-go stands
// for.
func TestBuiltKubeVersionFollowsGoMod(t *testing.T) {
	raw, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for line := range strings.SplitSeq(string(raw), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "k8s.io/client-go" {
			want = ofLibrary(fields[1])
		}
	}
	if want == "" || built != want {
		t.Errorf("built = %s, go.mod's k8s.io/client-go stands for %q: update it", built, want)
	}
}
