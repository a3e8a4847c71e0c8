package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReferenceBuild: both programs are built in the reference module,
// with cgo and without a workspace, into the given directory.
func TestReferenceBuild(t *testing.T) {
	dir := t.TempDir()
	cmd, bin, err := referenceBuild(t.Context(), dir, "shell-operator", "github.com/flant/shell-operator/cmd/shell-operator")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "shell-operator"); bin != want {
		t.Errorf("binary %s, want %s", bin, want)
	}
	if want := []string{"go", "build", "-o", bin, "github.com/flant/shell-operator/cmd/shell-operator"}; !slices.Equal(cmd.Args, want) {
		t.Errorf("command %q, want %q", cmd.Args, want)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "go.mod")); err != nil || filepath.Base(cmd.Dir) != "reference" {
		t.Errorf("built in %s (go.mod: %v), want the module in e2e/bench/reference", cmd.Dir, err)
	}
	// The last of a duplicated variable wins.
	for _, kv := range [][2]string{{"CGO_ENABLED", "1"}, {"GOWORK", "off"}} {
		last := ""
		for _, e := range cmd.Env {
			if k, v, _ := strings.Cut(e, "="); k == kv[0] {
				last = v
			}
		}
		if last != kv[1] {
			t.Errorf("%s=%q in the build's environment, want %q", kv[0], last, kv[1])
		}
	}
}
