package operation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// opConfigMap is ConfigMap ns/a, the object most cases work on.
func opConfigMap(data map[string]any) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns"},
	}
	if data != nil {
		obj["data"] = data
	}
	return &unstructured.Unstructured{Object: obj}
}

// opCreateOp is a create operation of ConfigMap ns/a.
func opCreateOp(typ Type, data map[string]any) Operation {
	return Operation{Type: typ, APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a", Object: opConfigMap(data)}
}

// Create operations take their coordinates from the object.
func TestParseOperationsCreateOperations(t *testing.T) {
	opRunParseCases(t, []opParseCase{
		{
			name:  "Create with a YAML object",
			input: "operation: Create\nobject:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: ns}\n  data: {k: v}\n",
			want:  []Operation{opCreateOp(Create, map[string]any{"k": "v"})},
		},
		{
			name:  "Create with a JSON string object",
			input: "operation: Create\nobject: |\n  {\"apiVersion\":\"v1\", \"kind\":\"ConfigMap\",\n   \"metadata\":{\"namespace\":\"ns\",\"name\":\"a\"}}\n",
			want:  []Operation{opCreateOp(Create, nil)},
		},
		{
			name:  "CreateIfNotExists in JSON",
			input: `{"operation":"CreateIfNotExists","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}}`,
			want:  []Operation{opCreateOp(CreateIfNotExists, nil)},
		},
		{
			name:  "CreateOrUpdate with a YAML string object, subresource and a number",
			input: "operation: CreateOrUpdate\nsubresource: /status\nobject: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: ns}\n  data: {count: 3}\n",
			want: []Operation{func() Operation {
				op := opCreateOp(CreateOrUpdate, map[string]any{"count": int64(3)})
				op.Subresource = "status"
				return op
			}()},
		},
		{
			name:  "Create with generateName",
			input: `{"operation":"Create","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"a-","namespace":"ns"}}}`,
			want: []Operation{{Type: Create, APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Object: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "a-", "namespace": "ns"},
			}}}},
		},
	})
}

// Deletes and patches name their object themselves.
func TestParseOperationsObjectOperations(t *testing.T) {
	opRunParseCases(t, []opParseCase{
		{
			name:  "deletes with and without apiVersion and namespace",
			input: "operation: Delete\nkind: Pod\nnamespace: ns\nname: p\n---\noperation: DeleteInBackground\napiVersion: apps/v1\nkind: Deployment\nnamespace: ns\nname: d\n---\noperation: DeleteNonCascading\nkind: Namespace\nname: ns\nignoreMissingObject: true\n",
			want: []Operation{
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "p"},
				{Type: DeleteInBackground, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "d"},
				{Type: DeleteNonCascading, Kind: "Namespace", Name: "ns", IgnoreMissingObject: true},
			},
		},
		{
			name:  "MergePatch as an object and as a YAML string",
			input: "- operation: MergePatch\n  kind: Deployment\n  namespace: ns\n  name: d\n  mergePatch: {spec: {replicas: 1}}\n- operation: MergePatch\n  kind: Deployment\n  namespace: ns\n  name: d\n  ignoreMissingObject: true\n  mergePatch: |\n    spec:\n      replicas: 2\n",
			want: []Operation{
				{Type: MergePatch, Kind: "Deployment", Namespace: "ns", Name: "d", MergePatch: json.RawMessage(`{"spec":{"replicas":1}}`)},
				{Type: MergePatch, Kind: "Deployment", Namespace: "ns", Name: "d", MergePatch: json.RawMessage(`{"spec":{"replicas":2}}`), IgnoreMissingObject: true},
			},
		},
		{
			name:  "JSONPatch as a list and as a JSON string",
			input: `{"operation":"JSONPatch","kind":"Deployment","namespace":"ns","name":"d","jsonPatch":[{"op":"replace","path":"/spec/replicas","value":1}]}` + "\n" + `{"operation":"JSONPatch","kind":"Deployment","namespace":"ns","name":"d","jsonPatch":"[\n {\"op\": \"remove\", \"path\": \"/spec/paused\"}\n]"}`,
			want: []Operation{
				{Type: JSONPatch, Kind: "Deployment", Namespace: "ns", Name: "d", JSONPatch: json.RawMessage(`[{"op":"replace","path":"/spec/replicas","value":1}]`)},
				{Type: JSONPatch, Kind: "Deployment", Namespace: "ns", Name: "d", JSONPatch: json.RawMessage(`[{"op":"remove","path":"/spec/paused"}]`)},
			},
		},
		{
			name:  "JQPatch with status subresource and ignoreHookError",
			input: "operation: JQPatch\napiVersion: example.com/v1\nkind: Widget\nname: w\njqFilter: .status.ready = true\nsubresource: status\nignoreHookError: true\n",
			want: []Operation{{
				Type: JQPatch, APIVersion: "example.com/v1", Kind: "Widget", Name: "w",
				JQFilter: ".status.ready = true", Subresource: "status", IgnoreHookError: true,
			}},
		},
	})
}

// A file holds any number of documents, each an operation or a list.
func TestParseOperationsStreams(t *testing.T) {
	opRunParseCases(t, []opParseCase{
		{name: "empty", input: " \n", want: []Operation{}},
		{name: "only comments and separators", input: "# none\n---\n---\n", want: []Operation{}},
		{
			name:  "JSON stream of objects and arrays, as appended with >>",
			input: `{"operation":"Delete","kind":"Pod","namespace":"ns","name":"a"}` + "\n" + `[{"operation":"Delete","kind":"Pod","namespace":"ns","name":"b"},{"operation":"Delete","kind":"Pod","namespace":"ns","name":"c"}]{"operation":"Delete","kind":"Pod","namespace":"ns","name":"d"}`,
			want: []Operation{
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "a"},
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "b"},
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "c"},
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "d"},
			},
		},
		{
			name:  "JSON documents separated by YAML separators",
			input: "---\n{\"operation\":\"Delete\",\"kind\":\"Pod\",\"namespace\":\"ns\",\"name\":\"a\"}\n---\n[{\"operation\":\"Delete\",\"kind\":\"Pod\",\"namespace\":\"ns\",\"name\":\"b\"}]\n",
			want: []Operation{
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "a"},
				{Type: Delete, Kind: "Pod", Namespace: "ns", Name: "b"},
			},
		},
	})
}

type opParseCase struct {
	name  string
	input string
	want  []Operation
}

func opRunParseCases(t *testing.T, tests []opParseCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.input))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseOperationsRejectsInvalidOperations(t *testing.T) {
	const (
		del   = "operation: Delete\nkind: Pod\nnamespace: ns\nname: p\n"
		merge = `{"operation":"MergePatch","kind":"Pod","namespace":"ns","name":"p","mergePatch":`
		jsonp = `{"operation":"JSONPatch","kind":"Pod","namespace":"ns","name":"p","jsonPatch":`
	)
	tests := []struct {
		name  string
		input string
		// want is the whole message, or its beginning when it ends in ": "
		// (the rest comes from a library).
		want string
	}{
		{"bad JSON", `{"operation": "Delete",`, "parse object operations: json document 0: "},
		{"bad YAML", "operation: [\n", "parse object operations: yaml document 0: "},
		{"scalar document", "hello\n", "document 0: is a string, want an operation or a list of operations"},
		{"item not an object", `[{"operation":"Delete","kind":"Pod","name":"p"}, 3]`, "operation 1: is a number, want an object"},
		{"no operation", "kind: Pod\nname: p\n", "operation 0: operation is required"},
		{"operation not a string", "operation: 3\n", "operation 0: operation is a number, want a string"},
		{"unknown operation", "operation: Apply\n", `operation 0: unknown operation "Apply", want one of [Create CreateIfNotExists CreateOrUpdate Delete DeleteInBackground DeleteNonCascading MergePatch JSONPatch JQPatch]`},
		{"no name, third operation", del + "---\n" + del + "---\noperation: MergePatch\nkind: Pod\nmergePatch: {a: 1}\n", "operation 2 (MergePatch): name is required"},
		{"no kind", "operation: DeleteInBackground\nname: p\n", "operation 0 (DeleteInBackground): kind is required"},
		{"name not a string", "operation: Delete\nkind: Pod\nname: 5\n", "operation 0 (Delete): name is a number, want a string"},
		{"bad apiVersion", "operation: Delete\napiVersion: a/b/c\nkind: Pod\nname: p\n", "operation 0 (Delete): apiVersion: "},
		{"delete with subresource", del + "subresource: status\n", "operation 0 (Delete): subresource is not supported: delete the object itself"},
		{"ignoreMissingObject not a boolean", del + "ignoreMissingObject: \"yes\"\n", "operation 0 (Delete): ignoreMissingObject is a string, want true or false"},
		{"create without object", "operation: Create\n", "operation 0 (Create): object is required"},
		{"object is a list", "operation: CreateOrUpdate\nobject: [a]\n", "operation 0 (CreateOrUpdate): object is a list, want an object"},
		{"object string of a scalar", "operation: Create\nobject: hello\n", "operation 0 (Create): object is a string, want an object"},
		{"object without apiVersion", "operation: Create\nobject: {kind: ConfigMap, metadata: {name: a}}\n", "operation 0 (Create): object.apiVersion is required"},
		{"object without kind", "operation: Create\nobject: {apiVersion: v1, metadata: {name: a}}\n", "operation 0 (Create): object.kind is required"},
		{"object without name", "operation: CreateIfNotExists\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {generateName: a-}}\n", "operation 0 (CreateIfNotExists): object.metadata.name is required"},
		{"object name not a string", "operation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: 1}}\n", "operation 0 (Create): object.metadata.name must be a string"},
		{"object with bad apiVersion", "operation: Create\nobject: {apiVersion: a/b/c, kind: ConfigMap, metadata: {name: a}}\n", "operation 0 (Create): object.apiVersion: "},
		{"no mergePatch", merge + `null}`, "operation 0 (MergePatch): mergePatch is required"},
		{"empty mergePatch", merge + `{}}`, "operation 0 (MergePatch): mergePatch must not be empty"},
		{"mergePatch list", merge + `[1]}`, "operation 0 (MergePatch): mergePatch is a list, want an object"},
		{"mergePatch string of a list", merge + `"[1]"}`, "operation 0 (MergePatch): mergePatch is a list, want an object"},
		{"mergePatch string of bad YAML", merge + `"a: [\n"}`, "operation 0 (MergePatch): mergePatch: "},
		{"no jsonPatch", `{"operation":"JSONPatch","kind":"Pod","name":"p"}`, "operation 0 (JSONPatch): jsonPatch is required"},
		{"empty jsonPatch", jsonp + `[]}`, "operation 0 (JSONPatch): jsonPatch must not be empty"},
		{"jsonPatch object", jsonp + `{"op":"remove","path":"/a"}}`, "operation 0 (JSONPatch): jsonPatch is an object, want a list of operations"},
		{"jsonPatch item not an object", jsonp + `["remove"]}`, "operation 0 (JSONPatch): jsonPatch: patch op 0: op is a string, want an object"},
		{"jsonPatch without op", jsonp + `[{"op":"remove","path":"/a"},{"path":"/a"}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 1: missing "op"`},
		{"jsonPatch unknown op", jsonp + `[{"op":"merge","path":"/a"}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 0: unknown op "merge"`},
		{"jsonPatch without path", jsonp + `[{"op":"remove"}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 0: remove: missing "path"`},
		{"jsonPatch add without value", jsonp + `[{"op":"add","path":"/a"}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 0: add "/a": missing "value"`},
		{"jsonPatch move without from", jsonp + `[{"op":"move","path":"/a"}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 0: move "/a": missing "from"`},
		{"jsonPatch path not a string", jsonp + `[{"op":"remove","path":1}]}`, `operation 0 (JSONPatch): jsonPatch: patch op 0: remove: "path" is a number, want a string`},
		{"no jqFilter", "operation: JQPatch\nkind: Pod\nname: p\n", "operation 0 (JQPatch): jqFilter is required"},
		{"jqFilter not a string", "operation: JQPatch\nkind: Pod\nname: p\njqFilter: [1]\n", "operation 0 (JQPatch): jqFilter is a list, want a string"},
		{"jqFilter does not compile", "operation: JQPatch\nkind: Pod\nname: p\njqFilter: .a = \n", "operation 0 (JQPatch): jqFilter: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := Parse([]byte(tc.input))
			if err == nil {
				t.Fatalf("Parse = %+v, want error %q", ops, tc.want)
			}
			if prefix, ok := strings.CutSuffix(tc.want, ": "); ok {
				if !strings.HasPrefix(err.Error(), prefix+": ") || err.Error() == prefix+": " {
					t.Errorf("error = %q, want %q followed by the cause", err, tc.want)
				}
				return
			}
			if err.Error() != tc.want {
				t.Errorf("error = %q\nwant    %q", err, tc.want)
			}
		})
	}
}

func TestOperationString(t *testing.T) {
	tests := []struct {
		name string
		op   Operation
		want string
	}{
		{"namespaced with version", Operation{Type: MergePatch, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "d"}, "MergePatch apps/v1 Deployment ns/d"},
		{"cluster-scoped without version", Operation{Type: Delete, Kind: "Namespace", Name: "ns"}, "Delete Namespace ns"},
		{"subresource", Operation{Type: JQPatch, Kind: "Widget", Namespace: "ns", Name: "w", Subresource: "status"}, "JQPatch Widget ns/w (status)"},
		{"generateName", Operation{Type: Create, APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Object: &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"generateName": "a-"},
		}}}, "Create v1 ConfigMap ns/a-*"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.op.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOperationAppliesOnHookError(t *testing.T) {
	tests := []struct {
		name string
		op   Operation
		want bool
	}{
		{"status with ignoreHookError", Operation{Type: MergePatch, Subresource: "status", IgnoreHookError: true}, true},
		{"status without ignoreHookError", Operation{Type: MergePatch, Subresource: "status"}, false},
		{"object with ignoreHookError", Operation{Type: MergePatch, IgnoreHookError: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.op.AppliesOnHookError(); got != tc.want {
				t.Errorf("AppliesOnHookError() = %v, want %v", got, tc.want)
			}
		})
	}
}
