package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

func TestClusterDeleted(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	live := []runtime.Object{
		&unstructured.Unstructured{Object: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: ops}\n")},
		&unstructured.Unstructured{Object: obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dropped, namespace: ops, uid: x}\ndata: {a: \"1\"}\n")},
	}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), live...)
	deployed := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dropped}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone-already}\n"
	rendered := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept}\ndata: {b: \"2\"}\n"
	c := Cluster{Dynamic: dyn, Kinds: kube.NewResolver(mapper), Namespace: "ops"}
	got, err := c.Deleted(t.Context(), deployed, rendered)
	if err != nil {
		t.Fatal(err)
	}
	want := []ObjectDiff{{Object: "ConfigMap/ops/dropped", Action: ActionDelete, Diff: `--- ConfigMap/ops/dropped (live)
+++ ConfigMap/ops/dropped (deleted)
@@ -1,7 +0,0 @@
-apiVersion: v1
-data:
-  a: "1"
-kind: ConfigMap
-metadata:
-  name: dropped
-  namespace: ops
`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	all, err := c.Deleted(t.Context(), deployed, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("uninstall deletes %d objects, want the 2 still in the cluster: %+v", len(all), all)
	}
}
