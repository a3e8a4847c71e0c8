package heal

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestObjectsFromManifest(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []ObjectRef
	}{{
		name: "empty manifest",
	}, {
		name: "documents as Helm renders them, empty ones skipped",
		manifest: `---
# Source: m/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
data: {k: v}
---
# Source: m/templates/empty.yaml
---

---
# Source: m/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: r
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace: other
`,
		want: []ObjectRef{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "a"},
			{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"},
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "other", Name: "d"},
		},
	}, {
		name: "a List stands for its items",
		manifest: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: s1}
- apiVersion: v1
  kind: Secret
  metadata: {name: s2, namespace: x}
---
apiVersion: v1
kind: ConfigMapList
items: []
`,
		want: []ObjectRef{
			{APIVersion: "v1", Kind: "Secret", Name: "s1"},
			{APIVersion: "v1", Kind: "Secret", Namespace: "x", Name: "s2"},
		},
	}, {
		name: "a kind ending in List without items is an object",
		manifest: `apiVersion: example.com/v1
kind: AllowList
metadata: {name: l}
`,
		want: []ObjectRef{{APIVersion: "example.com/v1", Kind: "AllowList", Name: "l"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ObjectsFromManifest(tt.manifest)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectsFromManifestErrors(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{"scalar document", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\njust text\n", "manifest document 2: not an object"},
		{"no kind", "apiVersion: v1\nmetadata: {name: s}\n", "manifest document 1: object has no apiVersion or kind"},
		{"no name", "apiVersion: v1\nkind: Secret\nmetadata: {generateName: s-}\n", "manifest document 1: Secret has no name"},
		{"invalid YAML", "apiVersion: v1\nkind: [Secret\n", "manifest document 1:"},
		{"list item without name", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret}\n", "List item 0: Secret has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ObjectsFromManifest(tt.manifest)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
