package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDriftParseManifest(t *testing.T) {
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
			got, err := driftParseManifest(tt.manifest)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
		})
	}
}

func TestDriftSecretData(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want string
	}{
		{name: "stringData goes into data, winning over data",
			obj:  `{apiVersion: v1, kind: Secret, data: {a: eA==, b: eQ==}, stringData: {b: z, c: w}}`,
			want: `{apiVersion: v1, kind: Secret, data: {a: eA==, b: eg==, c: dw==}}`},
		{name: "stringData alone", obj: `{apiVersion: v1, kind: Secret, stringData: {c: w}}`,
			want: `{apiVersion: v1, kind: Secret, data: {c: dw==}}`},
		{name: "a Secret without stringData", obj: `{apiVersion: v1, kind: Secret, data: {a: eA==}}`,
			want: `{apiVersion: v1, kind: Secret, data: {a: eA==}}`},
		{name: "not a Secret", obj: `{apiVersion: example.com/v1, kind: Secret, stringData: {c: w}}`,
			want: `{apiVersion: example.com/v1, kind: Secret, stringData: {c: w}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := driftTestObject(t, tt.obj)
			got := driftSecretData(obj)
			if d := cmp.Diff(driftTestObject(t, tt.want), got); d != "" {
				t.Errorf("object (-want +got):\n%s", d)
			}
			if d := cmp.Diff(driftTestObject(t, tt.obj), obj); d != "" {
				t.Errorf("the input changed (-before +after):\n%s", d)
			}
		})
	}
}

func TestDriftPartial(t *testing.T) {
	manifest := `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, labels: {app.kubernetes.io/name: d, tier: web}},
		spec: {replicas: 2, template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`
	tests := []struct {
		name    string
		ref     DriftObject
		fields  []string
		want    string
		wantErr bool
	}{
		{name: "a scalar and a label", ref: DriftObject{Name: "d", Namespace: "ns"},
			fields: []string{"spec.replicas", `metadata.labels["app.kubernetes.io/name"]`},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: ns, labels: {app.kubernetes.io/name: d}},
				spec: {replicas: 2}}`},
		{name: "a list goes whole", ref: DriftObject{Name: "d"},
			fields: []string{"spec.template.spec.containers[1].image", "spec.template.spec.containers[0].image"},
			want: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d},
				spec: {template: {spec: {containers: [{name: app, image: a}, {name: b, image: b}]}}}}`},
		{name: "a field the manifest does not set", ref: DriftObject{Name: "d"}, fields: []string{"spec.paused"}, wantErr: true},
		{name: "a path through a scalar", ref: DriftObject{Name: "d"}, fields: []string{"spec.replicas.x"}, wantErr: true},
		{name: "an unparsable path", ref: DriftObject{Name: "d"}, fields: []string{"spec..x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := driftPartial(driftTestObject(t, manifest), tt.ref, tt.fields)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if d := cmp.Diff(driftTestObject(t, tt.want), got); d != "" {
				t.Errorf("partial object (-want +got):\n%s", d)
			}
		})
	}
}
