package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRenderOffline(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  v: {{ .Values.mod.v | quote }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "cm.yaml"), []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := RenderOffline(t.Context(), "ns", Release{Name: "mod", ChartDir: dir, Values: map[string]any{"mod": map[string]any{"v": "x"}}})
	if err != nil {
		t.Fatalf("RenderOffline: %v", err)
	}
	for _, want := range []string{"name: mod", `v: "x"`, "addon-operator.io/managed-by: addon-operator", "addon-operator.io/module: mod"} {
		if !strings.Contains(r.Manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, r.Manifest)
		}
	}
	if len(r.Checksum) != checksumLen {
		t.Errorf("checksum %q has length %d, want %d", r.Checksum, len(r.Checksum), checksumLen)
	}
}
