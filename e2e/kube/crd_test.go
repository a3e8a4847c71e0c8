package kube

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/kube/crd"
)

// crdFieldManager is the field manager the tests apply CRDs as.
const crdFieldManager = "addon-operator"

// crdGadget is a CRD of kind Gadget (plural gadgets) in group, whose spec
// has the given properties (name: type).
func crdGadget(group string, properties ...string) string {
	var props strings.Builder
	for _, p := range properties {
		name, typ, _ := strings.Cut(p, ": ")
		props.WriteString("                " + name + ": {type: " + typ + "}\n")
	}
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.` + group + `
spec:
  group: ` + group + `
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
` + props.String()
}

func crdClients(t *testing.T) (apiextensionsclient.Interface, dynamic.Interface) {
	t.Helper()
	ext, err := apiextensionsclient.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return ext, dyn
}

func crdWrite(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func crdGadgetObject(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crd.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

func TestApplyCRDsCreatesAndUpdates(t *testing.T) {
	ext, dyn := crdClients(t)
	ns := cp.Namespace(t)
	dir := t.TempDir()
	crdWrite(t, dir, "gadgets.yaml", crdGadget("crd.example.com", "color: string"))
	crdWrite(t, dir, "doc-gadgets.yaml", "# documentation, not a CRD\ntitle: Gadgets\n")
	crdWrite(t, dir, "_gadgets-old.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no}\n")

	start := time.Now()
	names, err := crd.Apply(t.Context(), ext, dir, crdFieldManager)
	if err != nil {
		t.Fatalf("first apply: %v", err)
	}
	t.Logf("created and established in %v", time.Since(start))
	if diff := cmp.Diff([]string{"gadgets.crd.example.com"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	gadgets := dyn.Resource(schema.GroupVersionResource{Group: "crd.example.com", Version: "v1", Resource: "gadgets"}).Namespace(ns)
	if _, err := gadgets.Create(t.Context(), crdGadgetObject(ns, "g1", map[string]any{"color": "red"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a Gadget right after ApplyCRDs: %v", err)
	}

	crdWrite(t, dir, "gadgets.yaml", crdGadget("crd.example.com", "color: string", "size: integer"))
	start = time.Now()
	if _, err := crd.Apply(t.Context(), ext, dir, crdFieldManager); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	t.Logf("updated in %v", time.Since(start))
	updated, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "gadgets.crd.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := updated.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"]; !ok {
		t.Fatalf("the updated CRD has no spec.size: %+v", updated.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"])
	}
	if !crdHasCondition(updated, apiextensionsv1.Established) {
		t.Errorf("the updated CRD is not established: %+v", updated.Status.Conditions)
	}
	if !slices.ContainsFunc(updated.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
		return f.Manager == crdFieldManager && f.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("no fields applied by %q: %+v", crdFieldManager, updated.ManagedFields)
	}

	// The API server switches to the new schema asynchronously: until then
	// it prunes spec.size. Dry runs find the moment without leaving objects.
	sized := crdGadgetObject(ns, "g2", map[string]any{"color": "blue", "size": int64(3)})
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, healTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := gadgets.Create(ctx, sized, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		_, kept, _ := unstructured.NestedInt64(got.Object, "spec", "size")
		return kept, nil
	})
	if err != nil {
		t.Fatalf("spec.size is not kept after the update: %v", err)
	}
	t.Logf("new schema in effect %v after the update started", time.Since(start))
	got, err := gadgets.Create(t.Context(), sized, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a Gadget with the new field: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Errorf("spec.size = %d, want 3", size)
	}
}

func crdHasCondition(def *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range def.Status.Conditions {
		if c.Type == typ && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func TestApplyCRDsRejectsOtherKindsBeforeApplying(t *testing.T) {
	ext, _ := crdClients(t)
	dir := t.TempDir()
	crdWrite(t, dir, "a.yaml", crdGadget("rejected.example.com", "color: string"))
	crdWrite(t, dir, "b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")

	_, err := crd.Apply(t.Context(), ext, dir, crdFieldManager)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.yaml")) {
		t.Fatalf("error = %v, want one naming b.yaml", err)
	}
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "gadgets.rejected.example.com", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the valid CRD of a.yaml was applied: get = %v", err)
	}
}
