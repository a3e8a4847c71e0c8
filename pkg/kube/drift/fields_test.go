package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// testObject decodes a YAML object the way the dynamic client does.
func testObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := utilyaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return obj
}

// testEntry is a managedFields entry of manager with the fieldsV1 set raw.
func testEntry(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(raw)}
}

// testSet decodes a fieldsV1 set.
func testSet(t *testing.T, raw string) *fieldpath.Set {
	t.Helper()
	set, err := decodeFields(testEntry("test", metav1.ManagedFieldsOperationApply, raw))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func testStrings(paths []fieldpath.Path) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p.String())
	}
	return out
}

func TestDriftPaths(t *testing.T) {
	const set = `{
		"f:metadata": {"f:name": {}, "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:tier": {}}, "f:finalizers": {}},
		"f:spec": {"f:replicas": {}, "f:paused": {}, "f:args": {}, "f:template": {"f:spec": {"f:containers": {
			"k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:image": {}, "f:env": {"k:{\"name\":\"EMPTY\"}": {".": {}, "f:name": {}, "f:value": {}}}},
			"k:{\"name\":\"side\"}": {".": {}, "f:name": {}, "f:image": {}}},
			"f:finalizers": {"v:\"a\"": {}}}}},
		"f:status": {"f:replicas": {}},
		"f:webhooks": {"k:{\"name\":\"w\"}": {"f:clientConfig": {"f:caBundle": {}}}}}`
	applied := testObject(t, `{metadata: {name: d, labels: {app.kubernetes.io/name: d, tier: web}, finalizers: [x]},
		spec: {replicas: 2, paused: false, args: [], template: {spec: {
			containers: [{name: side, image: s}, {name: app, image: a, env: [{name: EMPTY}]}], finalizers: [a]}}},
		status: {replicas: 1}, webhooks: [{name: w, clientConfig: {caBundle: one}}]}`)
	live := testObject(t, `{metadata: {name: d, labels: {app.kubernetes.io/name: x, tier: web}},
		spec: {replicas: 2.0, template: {spec: {
			containers: [{name: app, image: b, env: [{name: EMPTY}]}]}}},
		status: {replicas: 9}, webhooks: [{name: w, clientConfig: {caBundle: two}}]}`)
	tests := []struct {
		name  string
		owned string
		want  []string
	}{
		{name: "no controllers", owned: `{}`, want: []string{
			".metadata.labels.app.kubernetes.io/name",
			".spec.paused",
			`.spec.template.spec.containers[name="app"].image`,
			`.spec.template.spec.containers[name="side"].image`,
			`.spec.template.spec.containers[name="side"].name`,
			`.spec.template.spec.finalizers[="a"]`,
		}},
		{name: "a controller owns the image", owned: `{"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}}}`, want: []string{
			".metadata.labels.app.kubernetes.io/name",
			".spec.paused",
			`.spec.template.spec.containers[name="side"].image`,
			`.spec.template.spec.containers[name="side"].name`,
			`.spec.template.spec.finalizers[="a"]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testStrings(driftPaths(testSet(t, set), testSet(t, tt.owned), applied, live))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("drifted fields (-want +got):\n%s", d)
			}
		})
	}
}

func TestDriftLookup(t *testing.T) {
	obj := testObject(t, `{spec: {list: [{name: a, port: 80, v: 1}, {name: a, port: 81, v: 2}], set: [a1, b2], plain: [p, q]}}`)
	tests := []struct {
		name   string
		path   fieldpath.Path
		want   any
		wantOK bool
	}{
		{name: "by two keys", path: fieldpath.MakePathOrDie("spec", "list", fieldpath.KeyByFields("name", "a", "port", 81), "v"), want: int64(2), wantOK: true},
		{name: "keys that match no item", path: fieldpath.MakePathOrDie("spec", "list", fieldpath.KeyByFields("name", "b"), "v")},
		{name: "by value", path: fieldpath.MakePathOrDie("spec", "set", value.NewValueInterface("b2")), want: "b2", wantOK: true},
		{name: "by index", path: fieldpath.MakePathOrDie("spec", "plain", 1), want: "q", wantOK: true},
		{name: "index out of range", path: fieldpath.MakePathOrDie("spec", "plain", 2)},
		{name: "through a scalar", path: fieldpath.MakePathOrDie("spec", "list", fieldpath.KeyByFields("name", "a", "port", 80), "v", "x")},
		{name: "a key into a map", path: fieldpath.MakePathOrDie("spec", fieldpath.KeyByFields("name", "a"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lookup(obj, tt.path)
			if ok != tt.wantOK || !cmp.Equal(got, tt.want) {
				t.Errorf("lookup(%s) = %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestDriftAppliedFields(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		testEntry("helm", metav1.ManagedFieldsOperationUpdate, `{"f:data": {"f:a": {}}}`),
		testEntry(FieldManager, metav1.ManagedFieldsOperationUpdate, `{"f:data": {"f:b": {}}}`),
		testEntry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data": {"f:c": {}}}`),
	}
	set, err := appliedFields(entries)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.String(); got != ".data.c" {
		t.Errorf("applied fields = %q, want only the Apply entry's .data.c", got)
	}
	if set, err := appliedFields(entries[:2]); err != nil || !set.Empty() {
		t.Errorf("without the Apply entry: %v, %v; want no fields (the manifest sets none the server tracks)", set, err)
	}
	bad := []metav1.ManagedFieldsEntry{testEntry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:a": [}`)}
	if _, err := appliedFields(bad); err == nil {
		t.Error("an undecodable fieldsV1 set is no error")
	}
}

func TestDriftControllerFields(t *testing.T) {
	hpa := testEntry("horizontal-pod-autoscaler", metav1.ManagedFieldsOperationUpdate, `{"f:spec": {"f:replicas": {}}}`)
	hpa.Subresource = "scale"
	entries := []metav1.ManagedFieldsEntry{
		hpa,
		testEntry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, `{"f:status": {"f:replicas": {}}}`),
		testEntry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:spec": {"f:paused": {}}}`),
		testEntry("my-operator", metav1.ManagedFieldsOperationApply, `{"f:spec": {"f:minReadySeconds": {}}}`),
		{Manager: "before-fieldsv1", FieldsType: "FieldsV0"},
	}
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{name: "defaults", want: []string{".spec.replicas", ".status.replicas"}},
		{name: "one more", extra: []string{"my-operator"}, want: []string{".spec.minReadySeconds", ".spec.replicas", ".status.replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owned, err := controllerFields(entries, tt.extra)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for p := range owned.All() {
				got = append(got, p.String())
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("controllers' fields (-want +got):\n%s", d)
			}
		})
	}
}

func TestDriftEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{name: "int and float", a: int64(2), b: 2.0, want: true},
		{name: "absent and empty list", a: nil, b: []any{}, want: true},
		{name: "absent and empty map", a: map[string]any{}, b: nil, want: true},
		{name: "absent and empty string", a: nil, b: "", want: false},
		{name: "lists in another order", a: []any{"a", "b"}, b: []any{"b", "a"}, want: false},
		{name: "string and number", a: "1", b: int64(1), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equal(tt.a, tt.b); got != tt.want {
				t.Errorf("equal(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
