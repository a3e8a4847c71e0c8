package crd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// testYAML is a minimal CRD for <plural>.example.com.
func testYAML(plural string) string {
	const group = "example.com"
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + plural + `.` + group + `
spec:
  group: ` + group + `
  names: {kind: Thing, plural: ` + plural + `}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
status:
  acceptedNames: {kind: "", plural: ""}
  conditions: []
  storedVersions: []
`
}

// testDir writes files (path relative to the directory: content) into a
// new crds directory.
func testDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "crds")
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCRDLoad(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // file (relative) and CRD name
	}{{
		name: "no crds directory",
	}, {
		name: "multi-document files in path order, skipped prefixes and extensions",
		files: map[string]string{
			"b.yaml":            testYAML("bs") + "---\n# nothing\n---\n" + testYAML("cs"),
			"a.yml":             "---\n" + testYAML("as"),
			"sub/d.yaml":        testYAML("ds"),
			"doc-ru.yaml":       "not: a CRD",
			"_disabled.yaml":    "not: a CRD",
			"sub/_ignored.yaml": "not: a CRD",
			"README.md":         "not: a CRD",
			"empty.yaml":        "",
		},
		want: []string{"a.yml as.example.com", "b.yaml bs.example.com", "b.yaml cs.example.com", "sub/d.yaml ds.example.com"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "crds")
			if tt.files != nil {
				dir = testDir(t, tt.files)
			}
			docs, err := crdLoad(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range docs {
				rel, _ := filepath.Rel(dir, d.file)
				got = append(got, filepath.ToSlash(rel)+" "+d.name)
				if strings.Contains(string(d.body), "status") {
					t.Errorf("%s: body keeps the status: %s", d.name, d.body)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CRDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCRDLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"other kind", testYAML("as") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "bad.yaml: document 2: v1 ConfigMap is not an apiextensions.k8s.io/v1 CustomResourceDefinition"},
		{"old CRD version", strings.Replace(testYAML("as"), "/v1\n", "/v1beta1\n", 1), "bad.yaml: document 1: apiextensions.k8s.io/v1beta1 CustomResourceDefinition is not"},
		{"no name", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", "bad.yaml: document 1: CustomResourceDefinition has no name"},
		{"scalar", "just text", "bad.yaml: document 1: not an object"},
		{"invalid YAML", "a: [b", "bad.yaml: document 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testDir(t, map[string]string{"a.yaml": testYAML("as"), "bad.yaml": tt.content})
			_, err := crdLoad(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCRDEstablished(t *testing.T) {
	cond := func(typ apiextensionsv1.CustomResourceDefinitionConditionType, status apiextensionsv1.ConditionStatus, generation int64) apiextensionsv1.CustomResourceDefinitionCondition {
		return apiextensionsv1.CustomResourceDefinitionCondition{Type: typ, Status: status, ObservedGeneration: generation}
	}
	tests := []struct {
		name       string
		status     apiextensionsv1.CustomResourceDefinitionStatus
		want       bool
		wantReject bool
	}{
		{name: "no conditions yet"},
		{name: "established", status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			cond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, 0), cond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, 0),
		}}, want: true},
		{name: "names rejected", wantReject: true, status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			cond(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, 0),
		}}},
		{name: "status of an older generation", status: apiextensionsv1.CustomResourceDefinitionStatus{ObservedGeneration: 1, Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			cond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, 1),
		}}},
		{name: "condition of an older generation", status: apiextensionsv1.CustomResourceDefinitionStatus{Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			cond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, 1),
		}}},
		{name: "established for the current generation", status: apiextensionsv1.CustomResourceDefinitionStatus{ObservedGeneration: 2, Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
			cond(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, 2),
		}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: tt.status}
			got, err := crdEstablished(crd)
			if got != tt.want || errors.Is(err, ErrNamesRejected) != tt.wantReject {
				t.Errorf("crdEstablished = %v, %v; want %v, rejected %v", got, err, tt.want, tt.wantReject)
			}
		})
	}
}

func TestApplyCRDs(t *testing.T) {
	client := apiextensionsfake.NewClientset()
	// The fake has no controllers: every CRD it returns is established.
	client.PrependReactor("get", "customresourcedefinitions", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj, err := client.Tracker().Get(action.GetResource(), "", action.(clienttesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		crd := obj.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
		return true, crd, nil
	})
	dir := testDir(t, map[string]string{
		"a.yaml": testYAML("as") + "---\n" + testYAML("bs"),
		"b.yaml": testYAML("as"), // applied twice, named once
	})
	names, err := Apply(t.Context(), client, dir, "test-manager")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"as.example.com", "bs.example.com"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	var applied []string
	for _, a := range client.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			applied = append(applied, p.GetName()+" "+string(p.GetPatchType()))
		}
	}
	want := []string{
		"as.example.com application/apply-patch+yaml",
		"bs.example.com application/apply-patch+yaml",
		"as.example.com application/apply-patch+yaml",
	}
	if diff := cmp.Diff(want, applied); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	if _, err := Apply(t.Context(), client, dir, ""); err == nil {
		t.Error("Apply without a field manager succeeded")
	}
}
