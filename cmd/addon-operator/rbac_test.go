package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestRBACGolden(t *testing.T) {
	dir := filepath.Join("testdata", "offline")
	common := []string{
		"--modules-dir", filepath.Join(dir, "modules"),
		"--global-hooks-dir", filepath.Join(dir, "global-hooks"),
		"--config", filepath.Join(dir, "configmap.yaml"),
	}
	for golden, args := range map[string][]string{
		"rbac-values.yaml": {"rbac"},
		"rbac-all-ns.json": {"rbac", "--all", "-n", "apps", "-o", "json"},
	} {
		t.Run(golden, func(t *testing.T) {
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(append(args, common...))
			if err := root.Execute(); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			checkFileGolden(t, filepath.Join(dir, "golden", golden), out.Bytes())
		})
	}
}

func checkFileGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got), regenerate with -update:\n%s", golden, diff)
	}
}

// TestChartRBACDefaultsAreGenerated keeps the chart's rbac.generated
// defaults equal to what `addon-operator rbac` computes for the image's
// own catalogue, so that they never go stale.
func TestChartRBACDefaultsAreGenerated(t *testing.T) {
	repo := filepath.Join("..", "..")
	// The Go hooks are built from modules/*/hooks-go, as the image does.
	build := exec.CommandContext(t.Context(), "go", "run", "./hack/buildhooks")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the modules' Go hooks: %v\n%s", err, out)
	}
	t.Setenv("ADDON_OPERATOR_NAMESPACE", "")
	root := newRootCommand()
	var out, stderr bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&stderr)
	root.SetArgs([]string{"rbac", "--modules-dir", filepath.Join(repo, "modules"), "--global-hooks-dir", filepath.Join(repo, "global-hooks")})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("rbac: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("rbac warned:\n%s", stderr.String())
	}
	var generated, chart struct {
		RBAC struct {
			Generated any `json:"generated"`
		} `json:"rbac"`
	}
	if err := yaml.Unmarshal(out.Bytes(), &generated); err != nil {
		t.Fatalf("rbac output: %v\n%s", err, out.String())
	}
	raw, err := os.ReadFile(filepath.Join(repo, "charts", "addon-operator", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatalf("chart values: %v", err)
	}
	if diff := cmp.Diff(generated.RBAC.Generated, chart.RBAC.Generated); diff != "" {
		t.Errorf("charts/addon-operator/values.yaml rbac.generated is not what "+
			"`addon-operator rbac --modules-dir modules --global-hooks-dir global-hooks` prints (-generated +chart):\n%s", diff)
	}
}
