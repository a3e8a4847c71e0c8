package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestRemovedAPIs(t *testing.T) {
	manifest := "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: old}\n---\n" +
		"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: new}\n---\n" +
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
	tests := []struct {
		kube string
		want []string
	}{
		{"1.30", []string{`extensions/v1beta1 Ingress "old": extensions/v1beta1 was removed in Kubernetes 1.22; rendering for 1.30`}},
		{"v1.22.0", []string{`extensions/v1beta1 Ingress "old": extensions/v1beta1 was removed in Kubernetes 1.22; rendering for v1.22.0`}},
		{"1.21", nil},
	}
	for _, tt := range tests {
		got, err := RemovedAPIs([]string{manifest}, tt.kube)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("kube %s (-want +got):\n%s", tt.kube, diff)
		}
	}
	if _, err := RemovedAPIs([]string{manifest}, "latest"); err == nil {
		t.Error("a version that does not parse: no error")
	}
}

func TestShowOnly(t *testing.T) {
	r := &helm.Rendered{
		Manifest: "---\n# Source: web/templates/a.yaml\nkind: A\n---\n# Source: web/templates/b.yaml\nkind: B\n",
		Hooks:    []string{"# Source: web/templates/hook.yaml\nkind: H\n"},
	}
	got, err := showOnly(r, []string{"templates/b.yaml", "web/templates/hook.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest != "---\n# Source: web/templates/b.yaml\nkind: B\n" || len(got.Hooks) != 1 {
		t.Errorf("showOnly = %q, %q", got.Manifest, got.Hooks)
	}
	if _, err := showOnly(r, []string{"templates/c.yaml"}); err == nil || !strings.Contains(err.Error(), "templates/c.yaml") {
		t.Errorf("unknown template: %v", err)
	}
}

// offlineTree is a module "web" with a config schema, disabled by default.
func offlineTree(t *testing.T) *Offline {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"modules/010-web/values.yaml":                "web:\n  replicas: 1\n",
		"modules/010-web/openapi/config-values.yaml": "type: object\nproperties:\n  replicas: {type: integer}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	x, err := NewOffline(module.Options{ModulesDirs: []string{filepath.Join(dir, "modules")}}, "", nil, &hook.Executor{})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestOverride layers values as hooks' patches: a global hook's enabled
// flag and global values, a module hook's section, all checked as hooks'
// patches are.
func TestOverride(t *testing.T) {
	x := offlineTree(t)
	if err := x.Override(values.Values{"webEnabled": true, "global": map[string]any{"domain": "x"}, "web": map[string]any{"replicas": 3}}); err != nil {
		t.Fatal(err)
	}
	list, err := x.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// No global hook ran: the plan names the flags that gave the value.
	if got := list[0]; !got.Enabled || got.By != SourceOverride || got.Reason != "webEnabled: true given by --values/--set" {
		t.Errorf("web after override: %+v", got)
	}
	// --explain names them too, for the leaves they set and only those.
	for name, want := range map[string][]store.Leaf{
		"web":    {{Path: "web.replicas", Value: 3, Source: "--values/--set"}},
		"global": {{Path: "global.domain", Value: "x", Source: "--values/--set"}},
	} {
		leaves, err := x.Explain(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, leaves); diff != "" {
			t.Errorf("Explain(%s) after override (-want +got):\n%s", name, diff)
		}
	}
	v, err := x.Values("web")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"global":{"domain":"x"},"web":{"replicas":3}}`
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	for _, bad := range []values.Values{
		{"nope": map[string]any{}},
		{"webEnabled": "yes"},
		{"web": map[string]any{"replicas": "many"}},
		{"global": 1},
	} {
		if err := offlineTree(t).Override(bad); err == nil {
			t.Errorf("Override(%v): no error", bad)
		}
	}
}
