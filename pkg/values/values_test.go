package values

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromYAML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Values
		wantErr string
	}{
		{name: "empty", in: "", want: Values{}},
		{name: "only comments", in: "# nothing\n", want: Values{}},
		{name: "null document", in: "null\n", want: Values{}},
		{
			name: "numbers become float64",
			in:   "global:\n  replicas: 3\n  ratio: 0.5\ncertManager:\n  enabled: true\n  hosts: [a, b]\n",
			want: Values{
				"global":      map[string]any{"replicas": 3.0, "ratio": 0.5},
				"certManager": map[string]any{"enabled": true, "hosts": []any{"a", "b"}},
			},
		},
		{name: "top-level list", in: "- a\n- b\n", wantErr: "values top level is a list, want a map"},
		{name: "top-level string", in: "hello\n", wantErr: "values top level is a string, want a map"},
		{name: "top-level number", in: "42\n", wantErr: "values top level is a number, want a map"},
		{name: "bad yaml", in: "a: [\n", wantErr: "decode yaml values: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromYAML([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromYAML() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Values
		wantErr string
	}{
		{name: "empty", in: "", want: Values{}},
		{name: "whitespace", in: " \n\t", want: Values{}},
		{name: "null", in: "null", want: Values{}},
		{
			name: "nested",
			in:   `{"global":{"a":1,"b":[1,"x",null]},"modEnabled":false}`,
			want: Values{
				"global":     map[string]any{"a": 1.0, "b": []any{1.0, "x", nil}},
				"modEnabled": false,
			},
		},
		{name: "top-level array", in: `[1]`, wantErr: "values top level is a list, want a map"},
		{name: "top-level bool", in: `true`, wantErr: "values top level is a boolean, want a map"},
		{name: "trailing data", in: `{} {}`, wantErr: "decode json values: "},
		{name: "truncated", in: `{"a":`, wantErr: "decode json values: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromJSON([]byte(tt.in))
			checkErr(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromJSON() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeepCopy(t *testing.T) {
	tests := []struct {
		name string
		in   Values
		want Values
	}{
		{name: "nil", in: nil, want: Values{}},
		{
			name: "nested Values become maps",
			in:   Values{"global": Values{"a": []any{Values{"b": 1.0}}}},
			want: Values{"global": map[string]any{"a": []any{map[string]any{"b": 1.0}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.DeepCopy()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DeepCopy() mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("copy shares nothing", func(t *testing.T) {
		orig := mustJSON(t, `{"m":{"list":[{"k":"v"}],"s":"x"}}`)
		want := mustJSON(t, `{"m":{"list":[{"k":"v"}],"s":"x"}}`)
		cp := orig.DeepCopy()
		m := cp["m"].(map[string]any)
		m["s"] = "changed"
		m["list"].([]any)[0].(map[string]any)["k"] = "changed"
		if diff := cmp.Diff(want, orig); diff != "" {
			t.Errorf("original changed through the copy (-want +got):\n%s", diff)
		}
	})
}

func TestSection(t *testing.T) {
	v := mustJSON(t, `{"global":{"a":{"b":1}},"modEnabled":true,"list":[1]}`)
	tests := []struct {
		name string
		key  string
		want Values
	}{
		{name: "map", key: "global", want: Values{"a": map[string]any{"b": 1.0}}},
		{name: "scalar", key: "modEnabled", want: Values{}},
		{name: "list", key: "list", want: Values{}},
		{name: "missing", key: "nope", want: Values{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := v.Section(tt.key)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Section(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
			if got == nil {
				t.Errorf("Section(%q) = nil, want non-nil", tt.key)
			}
		})
	}

	t.Run("section is a copy", func(t *testing.T) {
		s := v.Section("global")
		s["a"].(map[string]any)["b"] = 2.0
		if got := v["global"].(map[string]any)["a"].(map[string]any)["b"]; got != 1.0 {
			t.Errorf("values changed through a section: b = %v, want 1", got)
		}
	})
}

// checkErr fails the test unless err contains want, or is nil when want is
// empty.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("error = nil, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error = %q, want one containing %q", err, want)
	}
}

func mustJSON(tb testing.TB, s string) Values {
	tb.Helper()
	v, err := FromJSON([]byte(s))
	if err != nil {
		tb.Fatalf("FromJSON(%q): %v", s, err)
	}
	return v
}
