package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// testObject decodes a YAML object as the dynamic client would.
func testObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utilyaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return obj
}

func TestSecretData(t *testing.T) {
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
			obj := testObject(t, tt.obj)
			got := SecretData(obj)
			if d := cmp.Diff(testObject(t, tt.want), got); d != "" {
				t.Errorf("object (-want +got):\n%s", d)
			}
			if d := cmp.Diff(testObject(t, tt.obj), obj); d != "" {
				t.Errorf("the input changed (-before +after):\n%s", d)
			}
		})
	}
}
