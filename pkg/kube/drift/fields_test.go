package drift

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

// testPath parses a field path and resolves its list steps against
// live by position, as walk does for items without a name.
func testPath(t *testing.T, live map[string]any, field string) []driftStep {
	t.Helper()
	path, err := parsePath(field)
	if err != nil {
		t.Fatal(err)
	}
	var at any = live
	for i, step := range path {
		if !step.isList() {
			m, _ := at.(map[string]any)
			at = m[step.key]
			continue
		}
		list, _ := at.([]any)
		at = nil
		if step.index < len(list) {
			at = list[step.index]
			path[i].live, path[i].item = step.index, at
		}
	}
	return path
}

func TestDriftFieldSetOwns(t *testing.T) {
	containers := `{spec: {containers: [{name: side, image: s}, {name: app, image: a}],
		ports: [{containerPort: 80, protocol: TCP, name: http}], args: [a, b], list: [{x: 1}, {x: 2}]},
		metadata: {finalizers: [b, a]}}`
	tests := []struct {
		name   string
		fields string
		path   string
		want   bool
	}{
		{name: "f: a leaf owns its field", fields: `{"f:data":{"f:key":{}}}`, path: "data.key", want: true},
		{name: "f: a sibling is not owned", fields: `{"f:data":{"f:key":{}}}`, path: "data.other"},
		{name: "f: an unrelated field is not owned", fields: `{"f:data":{"f:key":{}}}`, path: "spec.replicas"},
		{name: "f: a dotted key", fields: `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/name":{}}}}`,
			path: `metadata.labels["app.kubernetes.io/name"]`, want: true},
		{name: "f: a leaf owns an atomic list's items", fields: `{"f:spec":{"f:args":{}}}`, path: "spec.args[1]", want: true},
		{name: "f: a map with children owns only them", fields: `{"f:spec":{".":{},"f:replicas":{}}}`, path: "spec.paused"},
		{name: "k: the item with the key", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}`,
			path: "spec.containers[1].image", want: true},
		{name: "k: another item", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}`,
			path: "spec.containers[0].image"},
		{name: "k: the item but not the field", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{}}}}}`,
			path: "spec.containers[1].image"},
		{name: "k: several keys, a number among them",
			fields: `{"f:spec":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:name":{}}}}}`,
			path:   "spec.ports[0].name", want: true},
		{name: "k: a key value that differs", fields: `{"f:spec":{"f:ports":{"k:{\"containerPort\":81,\"protocol\":\"TCP\"}":{"f:name":{}}}}}`,
			path: "spec.ports[0].name"},
		{name: "v: the set item of that value", fields: `{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}}`, path: "metadata.finalizers[1]", want: true},
		{name: "v: another set item", fields: `{"f:metadata":{"f:finalizers":{"v:\"a\"":{}}}}`, path: "metadata.finalizers[0]"},
		{name: "i: the item at that index", fields: `{"f:spec":{"f:list":{"i:1":{"f:x":{}}}}}`, path: "spec.list[1].x", want: true},
		{name: "i: another index", fields: `{"f:spec":{"f:list":{"i:1":{"f:x":{}}}}}`, path: "spec.list[0].x"},
		{name: "a missing live item is not owned", fields: `{"f:spec":{"f:list":{"i:5":{}}}}`, path: "spec.list[5]"},
		{name: "an empty set owns nothing", fields: `{}`, path: "data.key"},
	}
	live := testObject(t, containers)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := decodeFields([]byte(tt.fields))
			if err != nil {
				t.Fatalf("decodeFields: %v", err)
			}
			if got := set.owns(testPath(t, live, tt.path)); got != tt.want {
				t.Errorf("owns(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestDriftDecodeFieldsErrors(t *testing.T) {
	for _, raw := range []string{
		`not json`,
		`{"x:foo":{}}`,
		`{"nocolon":{}}`,
		`{"f:spec":{"i:one":{}}}`,
		`{"f:spec":{"k:{broken":{}}}`,
		`{"f:spec":{"v:[unterminated":{}}}`,
		`{"f:spec":[]}`,
	} {
		if _, err := decodeFields([]byte(raw)); err == nil {
			t.Errorf("decodeFields(%s) succeeded, want an error", raw)
		}
	}
}

func TestDriftDecodeManaged(t *testing.T) {
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "helm", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:key":{}}}`)},
		{Manager: "old", FieldsType: "FieldsV2", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)},
		{Manager: "empty", FieldsType: "FieldsV1"},
	}
	managed, err := decodeManaged(entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(managed) != 1 || managed[0].manager != "helm" {
		t.Fatalf("decoded %d entries (first %+v), want only helm's", len(managed), managed)
	}
	bad := []metav1.ManagedFieldsEntry{
		entries[0],
		{Manager: "bad", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"q:x":{}}`)},
	}
	if _, err := decodeManaged(bad); err == nil {
		t.Error("an undecodable entry is no error")
	}
}

func TestDriftIsDrift(t *testing.T) {
	live := testObject(t, `{data: {key: v}, spec: {replicas: 3}, webhooks: [{clientConfig: {caBundle: x}}]}`)
	owner := func(manager, fields string) driftManaged {
		set, err := decodeFields([]byte(fields))
		if err != nil {
			t.Fatal(err)
		}
		return driftManaged{manager: manager, set: set}
	}
	data := `{"f:data":{"f:key":{}}}`
	replicas := `{"f:spec":{"f:replicas":{}}}`
	tests := []struct {
		name        string
		path        string
		managed     []driftManaged
		controllers []string
		want        bool
	}{
		{name: "a change by kubectl-edit", path: "data.key", managed: []driftManaged{owner("helm", `{}`), owner("kubectl-edit", data)}, want: true},
		{name: "a change by client-side apply", path: "data.key", managed: []driftManaged{owner("kubectl-client-side-apply", data)}, want: true},
		{name: "a field still owned by the release", path: "data.key", managed: []driftManaged{owner("helm", data)}, want: true},
		{name: "a field nobody owns", path: "data.key", want: true},
		{name: "replicas under an HPA", path: "spec.replicas", managed: []driftManaged{owner("horizontal-pod-autoscaler", replicas)}},
		{name: "a field of kube-controller-manager", path: "spec.replicas", managed: []driftManaged{owner("kube-controller-manager", replicas)}},
		{name: "a field of some operator's controller", path: "spec.replicas", managed: []driftManaged{owner("Widget-Controller", replicas)}},
		{name: "a controller owns another field only", path: "data.key",
			managed: []driftManaged{owner("kube-controller-manager", replicas), owner("kubectl-edit", data)}, want: true},
		{name: "shared with a controller", path: "data.key", managed: []driftManaged{owner("kubectl", data), owner("vpa-updater", data)}},
		{name: "a manager named as a controller", path: "data.key", managed: []driftManaged{owner("cainjector", data)},
			controllers: []string{"cainjector"}},
		{name: "a manager not named", path: "data.key", managed: []driftManaged{owner("cainjector", data)},
			controllers: []string{"other"}, want: true},
		{name: "a webhook's caBundle", path: "webhooks[0].clientConfig.caBundle",
			managed: []driftManaged{owner("kubectl-edit", `{"f:webhooks":{}}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isDrift(testPath(t, live, tt.path), tt.managed, tt.controllers); got != tt.want {
				t.Errorf("isDrift(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}
