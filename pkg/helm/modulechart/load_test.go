package modulechart

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
)

// chartView is what a test can compare of a loaded chart.
type chartView struct {
	APIVersion string
	Name       string
	Version    string
	Templates  []string
	Files      []string
	Subcharts  []string
	Values     map[string]any
}

func viewChart(ch *chart.Chart) chartView {
	v := chartView{
		APIVersion: ch.Metadata.APIVersion,
		Name:       ch.Metadata.Name,
		Version:    ch.Metadata.Version,
		Values:     ch.Values,
	}
	for _, f := range ch.Templates {
		v.Templates = append(v.Templates, f.Name)
	}
	for _, f := range ch.Files {
		v.Files = append(v.Files, f.Name)
	}
	for _, dep := range ch.Dependencies() {
		v.Subcharts = append(v.Subcharts, dep.Name())
	}
	slices.Sort(v.Templates)
	slices.Sort(v.Files)
	slices.Sort(v.Subcharts)
	return v
}

// moduleTree is a module dir with everything the operator puts next to a
// chart.
func moduleTree() map[string]string {
	return map[string]string{
		"templates/cm.yaml":           "kind: ConfigMap\n",
		"templates/_helpers.tpl":      `{{ define "x" }}x{{ end }}`,
		"templates/.hidden.yaml":      "kind: Secret\n",
		"templates/skip.yaml":         "kind: Secret\n",
		"charts/sub/Chart.yaml":       "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
		"charts/sub/templates/s.yaml": "kind: Service\n",
		"charts/sub/values.yaml":      "port: 80\n",
		"values.yaml":                 "echo:\n  a: 1\nglobal:\n  b: 2\nsub:\n  port: 81\n",
		"values.schema.json":          `{"type": "object"}`,
		"README.md":                   "# echo\n",
		"files/config.toml":           "x = 1\n",
		".helmignore":                 "templates/skip.yaml\n",
		".git/config":                 "[core]\n",
		"enabled":                     "#!/bin/sh\necho true > $MODULE_ENABLED_RESULT\n",
		"crds/crd.yaml":               "kind: CustomResourceDefinition\n",
		"docs/README.md":              "docs\n",
		"hooks/startup.sh":            "#!/bin/sh\n",
		"hooks/lib/common.sh":         "\n",
		"images/app/Dockerfile":       "FROM scratch\n",
		"lib/helpers.sh":              "\n",
		"openapi/values.yaml":         "type: object\n",
	}
}

func TestLoadChartSynthesised(t *testing.T) {
	dir := writeFiles(t, moduleTree())
	shared := writeFiles(t, map[string]string{"extra.yaml": "kind: ConfigMap\n"})
	if err := os.Symlink(shared, filepath.Join(dir, "templates", "linked")); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"global": map[string]any{}, "echo": map[string]any{"a": 2}}

	ch, err := Load("echo", dir, values)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := chartView{
		APIVersion: "v2",
		Name:       "echo",
		Version:    "0.1.0",
		Templates:  []string{"templates/_helpers.tpl", "templates/cm.yaml", "templates/linked/extra.yaml"},
		Files:      []string{"README.md", "files/config.toml"},
		Subcharts:  []string{"sub"},
		// echo comes from the operator's values only; the chart's global
		// defaults and the subchart's settings stay chart defaults.
		Values: map[string]any{"global": map[string]any{"b": float64(2)}, "sub": map[string]any{"port": float64(81)}},
	}
	if diff := cmp.Diff(want, viewChart(ch)); diff != "" {
		t.Errorf("chart (-want +got):\n%s", diff)
	}
	if ch.Schema == nil {
		t.Error("values.schema.json was not loaded")
	}
}

func TestLoadChartWithChartYAML(t *testing.T) {
	tree := map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: own-name\nversion: 2.3.4\n",
		"templates/cm.yaml": "kind: ConfigMap\n",
		"values.yaml":       "echo:\n  a: 1\nother: true\n",
	}
	ch, err := Load("echo", writeFiles(t, tree), map[string]any{"echo": map[string]any{}})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := chartView{
		APIVersion: "v2",
		Name:       "own-name",
		Version:    "2.3.4",
		Templates:  []string{"templates/cm.yaml"},
		Values:     map[string]any{"other": true},
	}
	if diff := cmp.Diff(want, viewChart(ch)); diff != "" {
		t.Errorf("chart (-want +got):\n%s", diff)
	}
}

func TestLoadChartErrors(t *testing.T) {
	tests := []struct {
		name    string
		release string
		files   map[string]string // nil: the dir does not exist
	}{
		{name: "missing dir", release: "echo"},
		{name: "invalid Chart.yaml", release: "echo", files: map[string]string{"Chart.yaml": "name: [\n"}},
		{name: "name with a slash", release: "a/b", files: map[string]string{"templates/cm.yaml": "kind: ConfigMap\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "absent")
			if tt.files != nil {
				dir = writeFiles(t, tt.files)
			}
			if _, err := Load(tt.release, dir, nil); err == nil {
				t.Error("Load succeeded, want an error")
			}
		})
	}
}
