package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestObjects(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []map[string]any
		wantErr  bool
	}{
		{name: "empty", manifest: ""},
		{name: "documents, comments and blanks", manifest: `---
# Source: chart/templates/a.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {k: "1"}
---
# Source: chart/templates/empty.yaml
---

---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: x}
spec: {replicas: 2, ratio: 0.5}
`, want: []map[string]any{
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "1"}},
			{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "x"},
				"spec": map[string]any{"replicas": int64(2), "ratio": 0.5}},
		}},
		{name: "a List stands for its items", manifest: `apiVersion: v1
kind: ConfigMapList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
`, want: []map[string]any{
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}},
		}},
		{name: "no name", manifest: "apiVersion: v1\nkind: ConfigMap\n", wantErr: true},
		{name: "no kind", manifest: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: true},
		{name: "not a map", manifest: "- a\n- b\n", wantErr: true},
		{name: "invalid YAML", manifest: "apiVersion: v1\nkind: [\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ManifestObjects(tt.manifest)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
		})
	}
}
