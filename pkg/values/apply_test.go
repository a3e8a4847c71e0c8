package values

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type applyCase struct {
	name    string
	values  string // JSON; empty for nil Values
	patch   string
	want    string
	wantErr string
}

func TestPatchApply(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "empty patch", values: `{"a":1}`, patch: ``, want: `{"a":1}`},
		{name: "nil values", values: ``, patch: `{"op":"add","path":"/mod","value":{"x":1}}`, want: `{"mod":{"x":1}}`},
		{
			name:   "add, replace, remove, copy, move, test",
			values: `{"mod":{"a":1,"b":2,"l":[1,2]}}`,
			patch: `[{"op":"add","path":"/mod/c","value":3},{"op":"replace","path":"/mod/a","value":10},
				{"op":"remove","path":"/mod/b"},{"op":"copy","from":"/mod/c","path":"/mod/d"},
				{"op":"move","from":"/mod/d","path":"/mod/e"},{"op":"test","path":"/mod/e","value":3},
				{"op":"add","path":"/mod/l/-","value":3},{"op":"add","path":"/mod/l/0","value":0}]`,
			want: `{"mod":{"a":10,"c":3,"e":3,"l":[0,1,2,3]}}`,
		},
		{
			name:   "add creates missing parents",
			values: `{"mod":{}}`,
			patch:  `{"op":"add","path":"/mod/a/b/c","value":true}`,
			want:   `{"mod":{"a":{"b":{"c":true}}}}`,
		},
		{
			name:   "add creates the module section",
			values: `{"global":{}}`,
			patch:  `{"op":"add","path":"/mod/x","value":"y"}`,
			want:   `{"global":{},"mod":{"x":"y"}}`,
		},
		{
			name:   "add under a missing parent with an index creates an array",
			values: `{}`,
			patch:  `{"op":"add","path":"/mod/list/0","value":"a"}`,
			want:   `{"mod":{"list":["a"]}}`,
		},
		{
			name:   "add under a null parent replaces it",
			values: `{"mod":{"a":null}}`,
			patch:  `[{"op":"add","path":"/mod/a/b","value":1},{"op":"add","path":"/mod/n","value":null},{"op":"add","path":"/mod/n/x","value":2}]`,
			want:   `{"mod":{"a":{"b":1},"n":{"x":2}}}`,
		},
		{
			name:   "remove of a missing key is ignored",
			values: `{"mod":{"a":1}}`,
			patch:  `[{"op":"remove","path":"/mod/b"},{"op":"remove","path":"/other/deep/key"},{"op":"remove","path":"/mod/a"}]`,
			want:   `{"mod":{}}`,
		},
		{
			name:   "add null keeps the key",
			values: `{"mod":{"a":1}}`,
			patch:  `{"op":"add","path":"/mod/a","value":null}`,
			want:   `{"mod":{"a":null}}`,
		},
		{
			name:   "test compares JSON values",
			values: `{"mod":{"l":[null,{"a":[1,null]}],"n":1}}`,
			patch:  `[{"op":"test","path":"/mod/l","value":[null,{"a":[1.0,null]}]},{"op":"test","path":"/mod/l/-1/a/1","value":null},{"op":"test","path":"/mod/n","value":1}]`,
			want:   `{"mod":{"l":[null,{"a":[1,null]}],"n":1}}`,
		},
	})
}

func TestPatchApplyErrors(t *testing.T) {
	runApplyCases(t, []applyCase{
		{
			name:    "replace of a missing key names the op",
			values:  `{"mod":{}}`,
			patch:   `[{"op":"add","path":"/mod/a","value":1},{"op":"replace","path":"/mod/b","value":2}]`,
			wantErr: `patch op 1: replace "/mod/b": replace operation does not apply`,
		},
		{
			name:    "failing test names the op",
			values:  `{"mod":{"a":1}}`,
			patch:   `[{"op":"remove","path":"/mod/x"},{"op":"remove","path":"/mod/y"},{"op":"test","path":"/mod/a","value":2}]`,
			wantErr: `patch op 2: test "/mod/a": value differs`,
		},
		{
			name:    "test of a missing path fails even for null",
			values:  `{"mod":{}}`,
			patch:   `{"op":"test","path":"/mod/a","value":null}`,
			wantErr: `patch op 0: test "/mod/a": missing key "a"`,
		},
		{
			name:    "test below a scalar",
			values:  `{"mod":{"a":"s"}}`,
			patch:   `{"op":"test","path":"/mod/a/b","value":null}`,
			wantErr: `patch op 0: test "/mod/a/b": "b" is below a string`,
		},
		{
			name:    "test index out of range",
			values:  `{"mod":{"l":[1]}}`,
			patch:   `[{"op":"add","path":"/mod/x","value":1},{"op":"test","path":"/mod/l/1","value":1}]`,
			wantErr: `patch op 1: test "/mod/l/1": index 1 out of range`,
		},
		{
			name:    "op after a test is named by its own index",
			values:  `{"mod":{"a":1}}`,
			patch:   `[{"op":"test","path":"/mod/a","value":1},{"op":"remove","path":"/mod/x"},{"op":"replace","path":"/mod/b","value":1}]`,
			wantErr: `patch op 2: replace "/mod/b": `,
		},
		{
			name:    "add under a scalar",
			values:  `{"mod":{"a":1}}`,
			patch:   `{"op":"add","path":"/mod/a/b","value":1}`,
			wantErr: `patch op 0: add "/mod/a/b": `,
		},
		{
			name:    "whole document replaced by a non-map",
			values:  `{"mod":{}}`,
			patch:   `{"op":"add","path":"","value":[1]}`,
			wantErr: `patched values: values top level is a list, want a map`,
		},
	})
}

func runApplyCases(t *testing.T, tests []applyCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v Values
			if tt.values != "" {
				v = mustJSON(t, tt.values)
			}
			before := v.DeepCopy()
			got, err := mustPatch(t, tt.patch).Apply(v)
			checkErr(t, err, tt.wantErr)
			if tt.wantErr == "" {
				if diff := cmp.Diff(mustJSON(t, tt.want), got); diff != "" {
					t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
				}
			}
			if tt.values != "" {
				if diff := cmp.Diff(before, v); diff != "" {
					t.Errorf("Apply() changed its input (-before +after):\n%s", diff)
				}
			}
		})
	}
}

func TestPatchApplyResultSharesNothing(t *testing.T) {
	v := mustJSON(t, `{"mod":{"a":{"b":1}}}`)
	got, err := Patch{}.Apply(v)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got["mod"].(map[string]any)["a"].(map[string]any)["b"] = 2.0
	if diff := cmp.Diff(mustJSON(t, `{"mod":{"a":{"b":1}}}`), v); diff != "" {
		t.Errorf("input changed through the result (-want +got):\n%s", diff)
	}
}

func mustPatch(tb testing.TB, s string) Patch {
	tb.Helper()
	p, err := ParsePatch([]byte(s))
	if err != nil {
		tb.Fatalf("ParsePatch(%q): %v", s, err)
	}
	return p
}
