package patch

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

func configMapsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
}

func widgetsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
}

// patchFake returns a Patcher over a fake dynamic client holding existing
// ConfigMaps, and a mapper that knows ConfigMap and Namespace.
func patchFake(t *testing.T, existing ...*unstructured.Unstructured) (*Patcher, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	objs := make([]runtime.Object, 0, len(existing))
	for _, o := range existing {
		objs = append(objs, o)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		configMapsGVR():                         "ConfigMapList",
		{Version: "v1", Resource: "namespaces"}: "NamespaceList",
		widgetsGVR():                            "WidgetList",
	}, objs...)
	return NewPatcher(client, kube.NewResolver(testMapper()), slog.New(slog.DiscardHandler)), client
}

// testMapper knows ConfigMap and Namespace.
func testMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return mapper
}

func mustParse(t *testing.T, input string) []operation.Operation {
	t.Helper()
	ops, err := operation.Parse([]byte(input))
	if err != nil {
		t.Fatalf("ParseOperations: %v", err)
	}
	return ops
}

// patchData returns the data of ConfigMap ns/name, or nil when it is absent.
func patchData(t *testing.T, client *dynamicfake.FakeDynamicClient, name string) map[string]any {
	t.Helper()
	got, err := client.Resource(configMapsGVR()).Namespace("ns").Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	data, _, _ := unstructured.NestedMap(got.Object, "data")
	if data == nil {
		data = map[string]any{}
	}
	return data
}

func TestPatcherAppliesOperations(t *testing.T) {
	const coords = "apiVersion: v1\nkind: ConfigMap\nnamespace: ns\nname: a\n"
	object := func(data string) string {
		return "object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, data: " + data + "}\n"
	}
	tests := []struct {
		name   string
		exists bool // ConfigMap ns/a exists with data {old: "1"}
		ops    string
		want   map[string]any // data of ns/a afterwards; nil: absent
	}{
		{"Create", false, "operation: Create\n" + object("{k: v}"), map[string]any{"k": "v"}},
		{"CreateIfNotExists creates", false, "operation: CreateIfNotExists\n" + object("{k: v}"), map[string]any{"k": "v"}},
		{"CreateIfNotExists keeps", true, "operation: CreateIfNotExists\n" + object("{k: v}"), map[string]any{"old": "1"}},
		{"CreateOrUpdate creates", false, "operation: CreateOrUpdate\n" + object("{k: v}"), map[string]any{"k": "v"}},
		{"CreateOrUpdate replaces", true, "operation: CreateOrUpdate\n" + object("{k: v}"), map[string]any{"k": "v"}},
		{"Delete", true, "operation: Delete\n" + coords, nil},
		{"DeleteInBackground", true, "operation: DeleteInBackground\n" + coords, nil},
		{"DeleteNonCascading", true, "operation: DeleteNonCascading\n" + coords, nil},
		{"Delete of a missing object", false, "operation: Delete\n" + coords, nil},
		{"Delete without apiVersion", true, "operation: Delete\nkind: ConfigMap\nnamespace: ns\nname: a\n", nil},
		{"MergePatch", true, "operation: MergePatch\nmergePatch: {data: {k: v}}\n" + coords, map[string]any{"old": "1", "k": "v"}},
		{"MergePatch of a missing object ignored", false, "operation: MergePatch\nignoreMissingObject: true\nmergePatch: {data: {k: v}}\n" + coords, nil},
		{"JSONPatch", true, "operation: JSONPatch\njsonPatch: [{op: replace, path: /data/old, value: \"2\"}]\n" + coords, map[string]any{"old": "2"}},
		{"JSONPatch of a missing object ignored", false, "operation: JSONPatch\nignoreMissingObject: true\njsonPatch: [{op: remove, path: /data}]\n" + coords, nil},
		{"JQPatch", true, "operation: JQPatch\njqFilter: '.data.k = (.data.old + \"!\")'\n" + coords, map[string]any{"old": "1", "k": "1!"}},
		{"JQPatch of a missing object ignored", false, "operation: JQPatch\nignoreMissingObject: true\njqFilter: .data = {}\n" + coords, nil},
		{"in order", false, "operation: Create\n" + object("{k: v}") + "---\noperation: MergePatch\nmergePatch: {data: {k: w}}\n" + coords, map[string]any{"k": "w"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var existing []*unstructured.Unstructured
			if tc.exists {
				existing = append(existing, configMap(map[string]any{"old": "1"}))
			}
			p, client := patchFake(t, existing...)
			if err := p.Apply(t.Context(), mustParse(t, tc.ops)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if diff := cmp.Diff(tc.want, patchData(t, client, "a")); diff != "" {
				t.Errorf("data of ns/a (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatcherReportsFailures(t *testing.T) {
	const coords = "apiVersion: v1\nkind: ConfigMap\nnamespace: ns\nname: a\n"
	tests := []struct {
		name string
		ops  string
		want string
		is   func(error) bool
	}{
		{"Create of an existing object", "operation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}}\n",
			`operation 0 (Create v1 ConfigMap ns/a): configmaps "a" already exists`, apierrors.IsAlreadyExists},
		{"MergePatch of a missing object", "operation: MergePatch\nmergePatch: {data: {k: v}}\n" + strings.Replace(coords, "name: a", "name: b", 1),
			`operation 0 (MergePatch v1 ConfigMap ns/b): configmaps "b" not found`, apierrors.IsNotFound},
		{"JSONPatch of a missing object", "operation: JSONPatch\njsonPatch: [{op: remove, path: /data}]\n" + strings.Replace(coords, "name: a", "name: b", 1),
			`operation 0 (JSONPatch v1 ConfigMap ns/b): configmaps "b" not found`, apierrors.IsNotFound},
		{"JQPatch of a missing object", "operation: JQPatch\njqFilter: .\n" + strings.Replace(coords, "name: a", "name: b", 1),
			`operation 0 (JQPatch v1 ConfigMap ns/b): configmaps "b" not found`, apierrors.IsNotFound},
		{"namespaced kind without namespace", "operation: Delete\nkind: ConfigMap\nname: a\n",
			"operation 0 (Delete ConfigMap a): ConfigMap is namespaced: namespace is required", nil},
		{"unknown kind", "operation: Delete\napiVersion: example.com/v1\nkind: Gadget\nname: g\n",
			`operation 0 (Delete example.com/v1 Gadget g): resolve kind: no matches for kind "Gadget" in version "example.com/v1"`, meta.IsNoMatchError},
		{"jq result not an object", "operation: JQPatch\njqFilter: '[.]'\n" + coords,
			"operation 0 (JQPatch v1 ConfigMap ns/a): jqFilter result is a list, want an object", nil},
		{"jq without result", "operation: JQPatch\njqFilter: empty\n" + coords,
			"operation 0 (JQPatch v1 ConfigMap ns/a): jqFilter produced no result", nil},
		{"jq with two results", "operation: JQPatch\njqFilter: '., .'\n" + coords,
			"operation 0 (JQPatch v1 ConfigMap ns/a): jqFilter produced more than one result", nil},
		{"jq error", "operation: JQPatch\njqFilter: 'error(\"boom\")'\n" + coords,
			"operation 0 (JQPatch v1 ConfigMap ns/a): jqFilter: error: boom", nil},
		{"stops at the first failure", "operation: Delete\n" + coords + "---\noperation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}\n" +
			"---\noperation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}\n" +
			"---\noperation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: ns}}\n",
			`operation 2 (Create v1 ConfigMap ns/c): configmaps "c" already exists`, apierrors.IsAlreadyExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, client := patchFake(t, configMap(map[string]any{"old": "1"}))
			err := p.Apply(t.Context(), mustParse(t, tc.ops))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Apply error = %v\nwant           %s", err, tc.want)
			}
			if tc.is != nil && !tc.is(err) {
				t.Errorf("error %v is not of the expected API error kind", err)
			}
			if tc.name == "stops at the first failure" && patchData(t, client, "d") != nil {
				t.Error("operation after the failed one was applied")
			}
		})
	}
}

// TestPatcherFindsKindsOfNewCRDs: a kind discovery did not serve when
// the cache was filled is found once the cache is past its fresh window.
func TestPatcherFindsKindsOfNewCRDs(t *testing.T) {
	_, client := patchFake(t)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"create"}},
		}},
	}}}
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	p := NewPatcher(client, kube.NewDiscovery(disc, time.Second, clk).Resolver(), slog.New(slog.DiscardHandler))
	if err := p.Apply(t.Context(), mustParse(t, "operation: Delete\nkind: ConfigMap\nnamespace: ns\nname: a\n")); err != nil {
		t.Fatalf("Apply before the CRD: %v", err)
	}
	disc.Resources = append(disc.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Namespaced: true, Verbs: []string{"create", "patch"}},
	}})
	clk.SetTime(clk.Now().Add(2 * time.Second))
	ops := mustParse(t, "operation: Create\nobject: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: ns}}\n"+
		"---\noperation: MergePatch\nkind: Widget\nnamespace: ns\nname: w\nmergePatch: {spec: {size: 2}}\n")
	if err := p.Apply(t.Context(), ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got, err := client.Resource(widgetsGVR()).Namespace("ns").Get(t.Context(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get widget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 2 {
		t.Errorf("spec.size = %d, want 2", size)
	}
}

func TestPatcherDeletePropagation(t *testing.T) {
	tests := []struct {
		op   operation.Type
		want metav1.DeletionPropagation
	}{
		{operation.Delete, metav1.DeletePropagationForeground},
		{operation.DeleteInBackground, metav1.DeletePropagationBackground},
		{operation.DeleteNonCascading, metav1.DeletePropagationOrphan},
	}
	for _, tc := range tests {
		t.Run(string(tc.op), func(t *testing.T) {
			p, client := patchFake(t, configMap(nil))
			ops := []operation.Operation{{Type: tc.op, Kind: "ConfigMap", Namespace: "ns", Name: "a"}}
			if err := p.Apply(t.Context(), ops); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			var policies []metav1.DeletionPropagation
			for _, a := range client.Actions() {
				if del, ok := a.(clienttesting.DeleteAction); ok && del.GetDeleteOptions().PropagationPolicy != nil {
					policies = append(policies, *del.GetDeleteOptions().PropagationPolicy)
				}
			}
			if diff := cmp.Diff([]metav1.DeletionPropagation{tc.want}, policies); diff != "" {
				t.Errorf("propagation policies (-want +got):\n%s", diff)
			}
		})
	}
}

// configMap is ConfigMap ns/a with data, none when nil.
func configMap(data map[string]any) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns"},
	}
	if data != nil {
		obj["data"] = data
	}
	return &unstructured.Unstructured{Object: obj}
}
