package weights

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

func cm(name, weight string) string {
	doc := "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	if weight != "" {
		doc += "  annotations:\n    werf.io/weight: \"" + weight + "\"\n"
	}
	return doc
}

// names returns each group as its weight followed by its objects' names.
func names(groups []Group) [][]string {
	if len(groups) == 0 {
		return nil
	}
	out := make([][]string, 0, len(groups))
	for _, g := range groups {
		row := []string{strconv.Itoa(g.Weight)}
		for _, obj := range g.Objects {
			row = append(row, (&unstructured.Unstructured{Object: obj}).GetName())
		}
		out = append(out, row)
	}
	return out
}

func TestGroups(t *testing.T) {
	for _, tt := range []struct {
		name     string
		manifest string
		want     [][]string
	}{
		{"no annotation", cm("a", "") + cm("b", ""), nil},
		{"one weight", cm("a", "5") + cm("b", "5"), nil},
		{"zero is the default", cm("a", "0") + cm("b", ""), nil},
		{"ascending, manifest order within a group", cm("a", "10") + cm("b", "") + cm("c", "-10") + cm("d", " 10 ") + cm("e", "-10"),
			[][]string{{"-10", "c", "e"}, {"0", "b"}, {"10", "a", "d"}}},
	} {
		groups, err := Groups(tt.manifest, "ns")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, names(groups)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestGroupsRefusesAWeightThatIsNoInteger(t *testing.T) {
	for _, v := range []string{"high", "1.5", " ", "0x10"} {
		_, err := Groups(cm("a", "1")+cm("b", v), "ns")
		var invalid *InvalidError
		if !errors.As(err, &invalid) || invalid.Object != "ConfigMap b" || invalid.Value != v {
			t.Errorf("weight %q: error %v, want an *InvalidError naming ConfigMap b", v, err)
		}
	}
}

func TestGroupManifestRoundTrips(t *testing.T) {
	groups, err := Groups(cm("a", "1")+cm("b", "-1"), "ns")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := groups[0].Manifest()
	if err != nil {
		t.Fatal(err)
	}
	again, err := kube.ManifestObjects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(groups[0].Objects, again); diff != "" {
		t.Errorf("group manifest (-want +got):\n%s", diff)
	}
}

func newCreator(t *testing.T, objs ...runtime.Object) (*Creator, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}: "ConfigMapList",
		{Version: "v1", Resource: "namespaces"}: "NamespaceList",
	}, objs...)
	return NewCreator(dyn, kube.NewResolver(mapper)), dyn
}

// CreateMissing creates what is missing with Helm's ownership metadata,
// in the release's namespace when the object names none, and leaves an
// existing object (here one of another owner) as it is.
func TestCreateMissing(t *testing.T) {
	existing := &unstructured.Unstructured{}
	existing.SetAPIVersion("v1")
	existing.SetKind("ConfigMap")
	existing.SetNamespace("apps")
	existing.SetName("taken")
	existing.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "other"})
	c, dyn := newCreator(t, existing)
	groups, err := Groups(cm("new", "-1")+cm("taken", "-1")+"---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: tenant\n  namespace: ignored\n  annotations: {werf.io/weight: \"-1\"}\n"+cm("later", ""), "ns")
	if err != nil {
		t.Fatal(err)
	}
	owner := Owner{Release: "db", Namespace: "apps"}
	missing, err := c.AnyMissing(t.Context(), owner, groups[0].Objects)
	if err != nil || !missing {
		t.Fatalf("AnyMissing before: %v, %v; want true", missing, err)
	}
	res, err := c.CreateMissing(t.Context(), owner, groups[0].Objects)
	if err != nil || res.Count != 2 || !cmp.Equal(res.Foreign, []string{"ConfigMap apps/taken"}) {
		t.Fatalf("CreateMissing: %+v, %v; want 2 created, ConfigMap apps/taken foreign", res, err)
	}
	got, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("apps").Get(t.Context(), "new", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := map[string]string{"app.kubernetes.io/managed-by": "Helm", "meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "apps", "werf.io/weight": "-1"}
	gotMeta := got.GetAnnotations()
	gotMeta["app.kubernetes.io/managed-by"] = got.GetLabels()["app.kubernetes.io/managed-by"]
	if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
		t.Errorf("created object's ownership (-want +got):\n%s", diff)
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(t.Context(), "tenant", metav1.GetOptions{}); err != nil {
		t.Errorf("cluster-scoped object: %v", err)
	}
	taken, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("apps").Get(t.Context(), "taken", metav1.GetOptions{})
	if err != nil || taken.GetAnnotations()["meta.helm.sh/release-name"] != "other" {
		t.Errorf("existing object changed: %v, %v", taken.GetAnnotations(), err)
	}
	if missing, err := c.AnyMissing(t.Context(), owner, groups[0].Objects); err != nil || missing {
		t.Errorf("AnyMissing after: %v, %v; want false", missing, err)
	}
	if res, err := c.CreateMissing(t.Context(), owner, groups[0].Objects); err != nil || res.Count != 0 || len(res.Foreign) != 1 {
		t.Errorf("CreateMissing again: %+v, %v; want none created, one foreign", res, err)
	}
}
