package modulechart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// bigFile makes a sparse file at dir/name one byte above Helm's limit for
// a chart file.
func bigFile(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(loader.MaxDecompressedFileSize + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadChartSkipsHooksWithoutHelmignore(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Chart.yaml":                 "apiVersion: v2\nname: echo\nversion: 1.0.0\n",
		"templates/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"hooks/venv/bin/python3":     "#!/bin/sh\n",
		"files/hooks/keep.txt":       "kept: only the top-level hooks/ is the operator's",
		"crds/widget.yaml":           "kind: CustomResourceDefinition\n",
		"openapi/config-values.yaml": "type: object\n",
	})
	bigFile(t, dir, "hooks/batch")
	// Helm's own loader refuses the module: the reason for loadChartDir.
	if _, err := loader.LoadDir(dir); err == nil || !strings.Contains(err.Error(), "larger than the maximum file size") {
		t.Fatalf("loader.LoadDir: %v, want the size error", err)
	}
	ch, err := Load("echo", dir, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	names := make([]string, 0, len(ch.Raw))
	for _, f := range ch.Raw {
		names = append(names, f.Name)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "hooks/") {
			t.Errorf("chart holds %s", name)
		}
	}
	joined := strings.Join(names, ",")
	for _, want := range []string{"Chart.yaml", "templates/cm.yaml", "files/hooks/keep.txt", "crds/widget.yaml", "openapi/config-values.yaml"} {
		if !strings.Contains(joined, want) {
			t.Errorf("chart files %v lack %s", names, want)
		}
	}
	if len(ch.Templates) != 1 || len(ch.CRDObjects()) != 1 {
		t.Errorf("templates %d, CRDs %d; want 1 and 1", len(ch.Templates), len(ch.CRDObjects()))
	}
}

func TestLoadChartKeepsHelmLimitsOutsideHooks(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: echo\nversion: 1.0.0\n",
		".helmignore": "ignored/\n",
	})
	bigFile(t, dir, "ignored/big")
	if _, err := Load("echo", dir, nil); err != nil {
		t.Fatalf(".helmignore still honoured: %v", err)
	}
	bigFile(t, dir, "files/big")
	_, err := Load("echo", dir, nil)
	if err == nil || !strings.Contains(err.Error(), `"files/big" is larger than the maximum file size`) {
		t.Fatalf("Load: %v, want the size error naming files/big", err)
	}
}
