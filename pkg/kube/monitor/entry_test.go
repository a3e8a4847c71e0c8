package monitor

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testConfigMap is a ConfigMap as the dynamic client decodes it, with
// the metadata noise every write changes.
func testConfigMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       ns,
			"resourceVersion": "7",
			"generation":      int64(2),
			"managedFields":   []any{map[string]any{"manager": "kubectl"}},
		},
		"data": data,
	}}
}

func TestMonitorFilterEntry(t *testing.T) {
	data := map[string]any{"a": "1", "b": "2", "html": "<a&b>"}
	tests := []struct {
		name         string
		jq           string
		keepFull     bool
		object       bool // want the full object
		filterResult string
		wantErr      bool
	}{
		{name: "full object without filter", keepFull: true, object: true},
		{name: "identity only", keepFull: false},
		{name: "filter without object", jq: ".data.a", filterResult: `"1"`},
		{name: "filter with object", jq: ".data.b", keepFull: true, object: true, filterResult: `"2"`},
		{name: "several outputs make an array", jq: ".data.a, .data.b", filterResult: `["1","2"]`},
		{name: "no output is null", jq: "empty", filterResult: `null`},
		{name: "halt ends the output", jq: `.data.a, halt, .data.b`, filterResult: `"1"`},
		{name: "integers stay integers", jq: ".metadata.generation", filterResult: `2`},
		{name: "no HTML escaping", jq: ".data.html", filterResult: `"<a&b>"`},
		{name: "managedFields are kept", jq: ".metadata.managedFields[0].manager", filterResult: `"kubectl"`},
		{name: "runtime error", jq: `error("boom")`, keepFull: true, wantErr: true},
	}
	for _, tt := range tests {
		for _, path := range entryPaths() {
			t.Run(tt.name+"/"+path.name, func(t *testing.T) {
				code, err := compileJQ(tt.jq)
				if err != nil {
					t.Fatalf("compile %q: %v", tt.jq, err)
				}
				e := path.entry(t, monitorFilter{jq: code, keepFull: tt.keepFull}, testConfigMap("ns", "cm", data))
				checkEntry(t, e, tt.filterResult, tt.object, tt.wantErr)
			})
		}
	}
}

// entryPath is one way a monitor gets its entries.
type entryPath struct {
	name  string
	entry func(testing.TB, monitorFilter, *unstructured.Unstructured) *monitorEntry
}

// entryPaths are the monitor's own informer's transform, and a shared
// informer's transform followed by the monitor's filter.
func entryPaths() []entryPath {
	return []entryPath{
		{name: "own informer", entry: func(tb testing.TB, f monitorFilter, u *unstructured.Unstructured) *monitorEntry {
			tb.Helper()
			e, ok := f.transform(tb.Context(), u).(*monitorEntry)
			if !ok {
				tb.Fatal("transform did not make an entry")
			}
			return e
		}},
		{name: "shared informer", entry: func(tb testing.TB, f monitorFilter, u *unstructured.Unstructured) *monitorEntry {
			tb.Helper()
			o, err := compactObject(u)
			if err != nil {
				tb.Fatal(err)
			}
			wo, ok := o.(*watchObject)
			if !ok {
				tb.Fatalf("transform made %T, want a watch object", o)
			}
			return f.sharedEntry(tb.Context(), &watchNote{obj: wo})
		}},
	}
}

func checkEntry(t *testing.T, e *monitorEntry, filterResult string, object, wantErr bool) {
	t.Helper()
	if e.namespace != "ns" || e.name != "cm" || e.resourceVersion != "7" {
		t.Errorf("identity = %s/%s@%s, want ns/cm@7", e.namespace, e.name, e.resourceVersion)
	}
	if (e.err != nil) != wantErr {
		t.Fatalf("err = %v, want error %v", e.err, wantErr)
	}
	if wantErr {
		if e.object != nil || e.filterResult != nil {
			t.Errorf("failed entry keeps object %s, filterResult %s", e.object, e.filterResult)
		}
		return
	}
	if got := string(e.filterResult); got != filterResult {
		t.Errorf("filterResult = %s, want %s", got, filterResult)
	}
	checkObject(t, e.object, object)
}

// checkObject checks that raw is the test ConfigMap as the API server
// sent it, managedFields included, or nil when !want.
func checkObject(t *testing.T, raw json.RawMessage, want bool) {
	t.Helper()
	if !want {
		if raw != nil {
			t.Errorf("object = %s, want none", raw)
		}
		return
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("object is not JSON: %v", err)
	}
	wantObj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "ns", "resourceVersion": "7", "generation": float64(2),
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"data": map[string]any{"a": "1", "b": "2", "html": "<a&b>"},
	}
	if diff := cmp.Diff(wantObj, got); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
}

func TestMonitorChecksum(t *testing.T) {
	base := func() *unstructured.Unstructured { return testConfigMap("ns", "cm", map[string]any{"k": "v"}) }
	noise := base()
	noise.SetResourceVersion("8")
	noise.SetGeneration(3)
	noise.SetManagedFields(nil)
	labelled := base()
	labelled.SetLabels(map[string]string{"l": "x"})
	changed := testConfigMap("ns", "cm", map[string]any{"k": "w"})

	tests := []struct {
		name  string
		jq    string
		other *unstructured.Unstructured
		same  bool
	}{
		{name: "resourceVersion, generation and managedFields are noise", other: noise, same: true},
		{name: "labels are a change", other: labelled, same: false},
		{name: "data is a change", other: changed, same: false},
		{name: "with a filter only its result counts", jq: ".data", other: labelled, same: true},
		{name: "a changed result is a change", jq: ".data", other: changed, same: false},
	}
	for _, tt := range tests {
		for _, path := range entryPaths() {
			t.Run(tt.name+"/"+path.name, func(t *testing.T) {
				code, err := compileJQ(tt.jq)
				if err != nil {
					t.Fatal(err)
				}
				f := monitorFilter{jq: code, keepFull: true}
				a, b := path.entry(t, f, base()), path.entry(t, f, tt.other)
				if (a.checksum == b.checksum) != tt.same {
					t.Errorf("checksums equal = %v, want %v", a.checksum == b.checksum, tt.same)
				}
			})
		}
	}
}

func TestMonitorChecksumLeavesObjectAlone(t *testing.T) {
	u := testConfigMap("ns", "cm", nil)
	e := monitorFilter{keepFull: true}.entry(t.Context(), u)
	if u.GetResourceVersion() != "7" || u.GetGeneration() != 2 {
		t.Errorf("object metadata changed to rv %q generation %d", u.GetResourceVersion(), u.GetGeneration())
	}
	var got map[string]any
	if err := json.Unmarshal(e.object, &got); err != nil {
		t.Fatal(err)
	}
	if md, _ := got["metadata"].(map[string]any); md["resourceVersion"] != "7" {
		t.Errorf("kept object lost its resourceVersion: %s", e.object)
	}
}

func TestMonitorTransformIsIdempotent(t *testing.T) {
	f := monitorFilter{keepFull: true}
	first := f.transform(t.Context(), testConfigMap("ns", "cm", nil))
	if again := f.transform(t.Context(), first); again != first {
		t.Errorf("transform of an entry = %v, want the entry itself", again)
	}
	shared, err := compactObject(testConfigMap("ns", "cm", nil))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := compactObject(shared); err != nil || again != shared {
		t.Errorf("shared transform of a watch object = %v, %v; want the object itself", again, err)
	}
}

// BenchmarkMonitorFilterEntry is the per-object cost of the informers'
// transform: with the full object kept, and with only a jq result.
func BenchmarkMonitorFilterEntry(b *testing.B) {
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	for _, bc := range []struct {
		name     string
		jq       string
		keepFull bool
	}{
		{name: "full object", keepFull: true},
		{name: "jq result only", jq: ".metadata.labels"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			code, err := compileJQ(bc.jq)
			if err != nil {
				b.Fatal(err)
			}
			f := monitorFilter{jq: code, keepFull: bc.keepFull}
			for b.Loop() {
				u := testConfigMap("ns", "cm", map[string]any{"payload": string(payload)})
				if e := f.entry(b.Context(), u); e.err != nil {
					b.Fatal(e.err)
				}
			}
		})
	}
}
