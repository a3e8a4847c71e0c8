package kube

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretValues(t *testing.T) {
	const manifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {key: not-secret}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
data:
  a: aHVudGVyMg==
  b: "not base64!"
stringData:
  c: from-string-data
  d: 12345
---
: not yaml [
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Secret
    metadata: {name: in-list}
    stringData: {e: listed}
---
apiVersion: example.com/v1
kind: Secret
metadata: {name: other-group}
stringData: {f: not-core}
`
	got := SecretValues(manifest)
	slices.Sort(got)
	want := []string{"12345", "from-string-data", "hunter2", "listed", "not base64!"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecretValues (-want +got):\n%s", diff)
	}
}
