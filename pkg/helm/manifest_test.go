package helm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestIsTheLastRevisions(t *testing.T) {
	env := newTestEnv(t)
	ctx := t.Context()
	if _, err := env.client.Manifest(ctx, "echo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Manifest before install: err = %v, want ErrNotFound", err)
	}
	dir := echoChart(t, "one")
	out, err := env.client.Apply(ctx, echoRelease(dir, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.client.Manifest(ctx, "echo")
	if err != nil {
		t.Fatalf("Manifest: %v", err)
	}
	if got != out.Manifest || !strings.Contains(got, `greeting: "hello"`) {
		t.Errorf("Manifest = %q, want the installed one %q", got, out.Manifest)
	}
}

func TestRenderOfflineWithCapabilities(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caps\ndata:\n" +
			"  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n" +
			"  monitoring: {{ .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1\" | quote }}\n",
		"Chart.yaml":    "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := RenderOfflineWith(t.Context(), "ns", Release{Name: "caps", ChartDir: dir, Values: map[string]any{}},
		Capabilities{KubeVersion: "1.25.3", APIVersions: []string{"monitoring.coreos.com/v1"}, IncludeCRDs: true})
	if err != nil {
		t.Fatalf("RenderOfflineWith: %v", err)
	}
	for _, want := range []string{`kube: "v1.25.3"`, `monitoring: "true"`, "name: things.example.com"} {
		if !strings.Contains(r.Manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, r.Manifest)
		}
	}
	plain, err := RenderOffline(t.Context(), "ns", Release{Name: "caps", ChartDir: dir, Values: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{`monitoring: "true"`, "things.example.com"} {
		if strings.Contains(plain.Manifest, unwanted) {
			t.Errorf("default render has %q:\n%s", unwanted, plain.Manifest)
		}
	}
	if _, err := RenderOfflineWith(t.Context(), "ns", Release{Name: "caps", ChartDir: dir}, Capabilities{KubeVersion: "one"}); err == nil {
		t.Error("a kube version that does not parse: no error")
	}
}

func TestParseSet(t *testing.T) {
	got := map[string]any{}
	for _, s := range []string{"global.domain=example.com,webEnabled=true", "web.replicas=3", "web.hosts[0]=a"} {
		if err := ParseSet(s, got); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]any{
		"global":     map[string]any{"domain": "example.com"},
		"webEnabled": true,
		"web":        map[string]any{"replicas": int64(3), "hosts": []any{"a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseSet (-want +got):\n%s", diff)
	}
	if err := ParseSet("noequals", map[string]any{}); err == nil {
		t.Error("ParseSet without '=': no error")
	}
}
