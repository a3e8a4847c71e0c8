package values

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Patch
		wantErr string
	}{
		{name: "empty", in: "", want: Patch{}},
		{name: "whitespace", in: " \n\t\n", want: Patch{}},
		{name: "empty array", in: "[]", want: Patch{}},
		{
			name: "array",
			in:   `[{"op":"add","path":"/mod/a","value":1},{"op":"remove","path":"/mod/b"}]`,
			want: Patch{{Op: "add", Path: "/mod/a", Value: 1.0}, {Op: "remove", Path: "/mod/b"}},
		},
		{
			name: "single object",
			in:   `{"op":"replace","path":"/mod/a","value":{"x":[true]}}`,
			want: Patch{{Op: "replace", Path: "/mod/a", Value: map[string]any{"x": []any{true}}}},
		},
		{
			name: "stream of objects and arrays appended with >>",
			in: `{"op":"add","path":"/mod/a","value":"1"}
[{"op":"add","path":"/mod/b","value":null}]
{"op":"test","path":"/mod/a","value":"1"}[]
[{"op":"move","from":"/mod/a","path":"/mod/c"},{"op":"copy","from":"/mod/c","path":"/mod/d"}]`,
			want: Patch{
				{Op: "add", Path: "/mod/a", Value: "1"},
				{Op: "add", Path: "/mod/b", Value: nil},
				{Op: "test", Path: "/mod/a", Value: "1"},
				{Op: "move", From: "/mod/a", Path: "/mod/c"},
				{Op: "copy", From: "/mod/c", Path: "/mod/d"},
			},
		},
		{
			name: "unused members are dropped",
			in:   `{"op":"remove","path":"/mod/a","value":5,"from":"/x","comment":"hi"}`,
			want: Patch{{Op: "remove", Path: "/mod/a"}},
		},
		{
			name: "escaped pointer",
			in:   `{"op":"add","path":"/mod/a~1b~0c","value":1}`,
			want: Patch{{Op: "add", Path: "/mod/a~1b~0c", Value: 1.0}},
		},
		{name: "unknown op names its index", in: `[{"op":"add","path":"/a","value":1},{"op":"ad","path":"/a","value":1}]`, wantErr: `patch op 1: unknown op "ad"`},
		{name: "op index counts across the stream", in: `{"op":"remove","path":"/a"} [{"op":"remove","path":"/a"},{"op":"remove","path":"/a"},{"op":"ad"}]`, wantErr: `patch op 3: unknown op "ad"`},
		{name: "op members are case-sensitive", in: `{"OP":"add","path":"/a","value":1}`, wantErr: `patch op 0: missing "op"`},
		{name: "op not a string", in: `{"op":1,"path":"/a"}`, wantErr: `patch op 0: "op" is a number, want a string`},
		{name: "missing path", in: `{"op":"remove"}`, wantErr: `patch op 0: remove: missing "path"`},
		{name: "path not a pointer", in: `{"op":"remove","path":"a/b"}`, wantErr: `patch op 0: remove: path: pointer "a/b" does not start with "/"`},
		{name: "bad escape", in: `{"op":"remove","path":"/a~2"}`, wantErr: `patch op 0: remove: path: pointer "/a~2" has "~" not followed by 0 or 1`},
		{name: "trailing tilde", in: `{"op":"remove","path":"/a~"}`, wantErr: `has "~" not followed by 0 or 1`},
		{name: "missing value", in: `{"op":"add","path":"/a"}`, wantErr: `patch op 0: add "/a": missing "value"`},
		{name: "test needs a value", in: `{"op":"test","path":"/a"}`, wantErr: `patch op 0: test "/a": missing "value"`},
		{name: "move needs from", in: `{"op":"move","path":"/a"}`, wantErr: `patch op 0: move "/a": missing "from"`},
		{name: "copy from not a pointer", in: `{"op":"copy","path":"/a","from":"b"}`, wantErr: `patch op 0: copy "/a": from: pointer "b" does not start`},
		{name: "op is not an object", in: `[{"op":"remove","path":"/a"}, 5]`, wantErr: `patch op 1: op is a number, want an object`},
		{name: "top-level string", in: `"add"`, wantErr: `patch item 0 is a string, want an op object or an array of ops`},
		{name: "null item", in: `[] null`, wantErr: `patch item 1 is null, want`},
		{name: "syntax error", in: `[{"op":"remove","path":"/a"}] {"op":`, wantErr: `patch item 1: unexpected EOF`},
		{name: "number out of range", in: `{"op":"add","path":"/a","value":1e999}`, wantErr: `patch op 0: add "/a": value: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePatch([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParsePatch() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		op   Op
		want string
	}{
		{name: "add keeps null value", op: Op{Op: "add", Path: "/a"}, want: `{"op":"add","path":"/a","value":null}`},
		{name: "remove has no value", op: Op{Op: "remove", Path: "/a", Value: 1, From: "/b"}, want: `{"op":"remove","path":"/a"}`},
		{name: "move has from", op: Op{Op: "move", Path: "/a", From: "/b", Value: 1}, want: `{"op":"move","path":"/a","from":"/b"}`},
		{name: "test has value", op: Op{Op: "test", Path: "/a", Value: false}, want: `{"op":"test","path":"/a","value":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.op)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
