package module

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// The JSON views below pin the discovered Set; paths are relative to the
// test tree's root.
type setJSON struct {
	GlobalStatic values.Values `json:"globalStatic"`
	Global       globalJSON    `json:"global"`
	Modules      []moduleJSON  `json:"modules"`
}

type globalJSON struct {
	Path             string   `json:"path"`
	HooksDir         string   `json:"hooksDir"`
	Hooks            []string `json:"hooks"`
	ConfigSchemaPath string   `json:"configSchemaPath"`
	ValuesSchemaPath string   `json:"valuesSchemaPath"`
}

type moduleJSON struct {
	Name             string        `json:"name"`
	Key              string        `json:"key"`
	Order            int           `json:"order"`
	Path             string        `json:"path"`
	IsHelm           bool          `json:"isHelm"`
	HasChartYAML     bool          `json:"hasChartYAML"`
	StaticValues     values.Values `json:"staticValues"`
	StaticEnabled    *bool         `json:"staticEnabled"`
	CommonValues     values.Values `json:"commonValues"`
	CommonEnabled    *bool         `json:"commonEnabled"`
	Hooks            []string      `json:"hooks"`
	EnabledScript    string        `json:"enabledScript"`
	ConfigSchemaPath string        `json:"configSchemaPath"`
	ValuesSchemaPath string        `json:"valuesSchemaPath"`
}

func renderSet(root string, set *Set) setJSON {
	rel := func(p string) string { return strings.TrimPrefix(p, root+"/") }
	rels := func(ps []string) []string {
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			out = append(out, rel(p))
		}
		return out
	}
	g := set.Global()
	out := setJSON{
		GlobalStatic: set.GlobalStatic(),
		Global: globalJSON{rel(g.Path()), rel(g.HooksDir()), rels(g.Hooks()),
			rel(g.ConfigSchemaPath()), rel(g.ValuesSchemaPath())},
	}
	for _, m := range set.Modules() {
		out.Modules = append(out.Modules, moduleJSON{
			Name: m.Name(), Key: m.Key(), Order: m.Order(), Path: rel(m.Path()),
			IsHelm: m.IsHelm(), HasChartYAML: m.HasChartYAML(),
			StaticValues: m.StaticValues(), StaticEnabled: m.StaticEnabled(),
			CommonValues: m.CommonValues(), CommonEnabled: m.CommonEnabled(),
			Hooks: rels(m.Hooks()), EnabledScript: rel(m.EnabledScript()),
			ConfigSchemaPath: rel(m.ConfigSchemaPath()), ValuesSchemaPath: rel(m.ValuesSchemaPath()),
		})
	}
	return out
}

// fullTree has every feature Discover knows about, across two modules dirs.
func fullTree() map[string]node {
	return map[string]node{
		"modules/values.yaml":                                 file("global:\n  clusterName: test\n  modules: {https: {mode: Disabled}}\ncertManager:\n  replicas: 1\ncertManagerEnabled: true\nhooksOnlyEnabled: false\n"),
		"modules/README.md":                                   file("ignored with a warning"),
		"modules/.git/HEAD":                                   file(""),
		"modules/010-cert-manager/Chart.yaml":                 file("name: cert-manager\nversion: 0.1.0\n"),
		"modules/010-cert-manager/values.yaml":                file("certManager:\n  replicas: 2\n  image: {tag: v1.2.3}\n"),
		"modules/010-cert-manager/templates/deployment.yaml":  file("kind: Deployment\n"),
		"modules/010-cert-manager/openapi/config-values.yaml": file("type: object\n"),
		"modules/010-cert-manager/openapi/values.yaml":        file("type: object\n"),
		"modules/010-cert-manager/enabled":                    script(),
		"modules/010-cert-manager/hooks/startup.sh":           script(),
		"modules/010-cert-manager/hooks/certs/renew.py":       script(),
		"modules/010-cert-manager/hooks/lib/common.sh":        script(),
		"modules/010-cert-manager/hooks/README.md":            file(""),
		"modules/010-cert-manager/hooks/.cache/x":             script(),
		"modules/020-ingress-nginx/templates/ds.yaml":         file("kind: DaemonSet\n"),
		"modules/020-ingress-nginx/enabled":                   file("#!/bin/sh\n"),
		"modules/hooks-only/hooks/sync":                       script(),
		"modules/hooks-only/values.yaml":                      file("hooksOnlyEnabled: true\n"),
		"modules/005-linked":                                  symlink("../external/linked"),
		"external/linked/Chart.yaml":                          file("name: linked\n"),
		"extra/values.yaml":                                   file("global:\n  clusterName: prod\ncertManager:\n  image: {pullPolicy: Always}\n"),
		"extra/010-cert-manager/Chart.yaml":                   file("name: shadowed\n"),
		"extra/030-monitoring/templates/cm.yaml":              file("kind: ConfigMap\n"),
		"global-hooks/hooks/000-startup.sh":                   script(),
		"global-hooks/hooks/discovery/nodes":                  script(),
		"global-hooks/hooks/lib/functions.sh":                 file(""),
		"global-hooks/openapi/config-values.yaml":             file("type: object\n"),
		"global-hooks/openapi/values.yaml":                    file("type: object\n"),
	}
}

func TestDiscoverGolden(t *testing.T) {
	root, set, logs, err := discoverTree(t, fullTree(), Options{
		ModulesDirs:     []string{"modules", "extra"},
		GlobalHooksDir:  "global-hooks",
		UnnumberedOrder: DefaultUnnumberedOrder,
	})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	got, err := json.MarshalIndent(renderSet(root, set), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "discover.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("discovered set differs from %s (-want +got):\n%s", golden, cmp.Diff(string(want), string(got)))
	}

	wantLogs := []map[string]string{
		warn("duplicate module dir ignored", "module", "cert-manager",
			"path", "$ROOT/extra/010-cert-manager", "reason", "kept $ROOT/modules/010-cert-manager"),
		warn("enabled script is not executable, ignored", "module", "ingress-nginx", "path", "$ROOT/modules/020-ingress-nginx/enabled"),
	}
	if diff := cmp.Diff(wantLogs, logs.records(t)); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
}
