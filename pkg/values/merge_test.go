package values

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type mergeCase struct {
	name   string
	layers []string // JSON, lowest priority first
	want   string
}

func TestMerge(t *testing.T) {
	runMergeCases(t, []mergeCase{
		{name: "no layers", layers: nil, want: `{}`},
		{name: "one layer is copied", layers: []string{`{"a":{"b":1}}`}, want: `{"a":{"b":1}}`},
		{
			name:   "maps merge recursively",
			layers: []string{`{"m":{"a":1,"n":{"x":1,"y":2}}}`, `{"m":{"b":2,"n":{"y":3,"z":4}}}`},
			want:   `{"m":{"a":1,"b":2,"n":{"x":1,"y":3,"z":4}}}`,
		},
		{
			name:   "slices are replaced, not merged",
			layers: []string{`{"l":[1,2,3]}`, `{"l":[9]}`},
			want:   `{"l":[9]}`,
		},
		{
			name:   "scalar replaces map",
			layers: []string{`{"a":{"b":1}}`, `{"a":"flat"}`},
			want:   `{"a":"flat"}`,
		},
		{
			name:   "map replaces scalar",
			layers: []string{`{"a":"flat"}`, `{"a":{"b":1}}`},
			want:   `{"a":{"b":1}}`,
		},
		{
			name: "static, defaults, config: later wins per leaf",
			layers: []string{
				`{"https":{"mode":"CertManager","certManager":{"issuer":"letsencrypt"}},"replicas":2}`,
				`{"https":{"mode":"Disabled"},"resources":{"cpu":"100m"}}`,
				`{"https":{"certManager":{"issuer":"selfsigned"}},"replicas":null}`,
			},
			want: `{"https":{"mode":"Disabled","certManager":{"issuer":"selfsigned"}},"resources":{"cpu":"100m"}}`,
		},
	})
}

func TestMergeNull(t *testing.T) {
	runMergeCases(t, []mergeCase{
		{
			name:   "null deletes a key from earlier layers",
			layers: []string{`{"m":{"keep":1,"drop":{"deep":true}}}`, `{"m":{"drop":null}}`},
			want:   `{"m":{"keep":1}}`,
		},
		{
			name:   "null deletes a whole section",
			layers: []string{`{"m":{"a":1},"g":1}`, `{"m":null}`},
			want:   `{"g":1}`,
		},
		{
			name:   "null with nothing to delete leaves no key",
			layers: []string{`{"a":null,"m":{"b":null,"c":1}}`},
			want:   `{"m":{"c":1}}`,
		},
		{
			name:   "nulls in a map replacing a scalar are dropped",
			layers: []string{`{"a":1}`, `{"a":{"b":null,"c":2}}`},
			want:   `{"a":{"c":2}}`,
		},
		{
			name:   "nulls inside slices are data",
			layers: []string{`{"l":[null,1]}`},
			want:   `{"l":[null,1]}`,
		},
		{
			name:   "later layer sets a key deleted earlier",
			layers: []string{`{"a":1}`, `{"a":null}`, `{"a":2}`},
			want:   `{"a":2}`,
		},
	})
}

func runMergeCases(t *testing.T, tests []mergeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layers := make([]Values, len(tt.layers))
			before := make([]Values, len(tt.layers))
			for i, l := range tt.layers {
				layers[i] = mustJSON(t, l)
				before[i] = mustJSON(t, l)
			}
			got := Merge(layers...)
			if diff := cmp.Diff(mustJSON(t, tt.want), got); diff != "" {
				t.Errorf("Merge() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, layers); diff != "" {
				t.Errorf("Merge() changed its inputs (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMergeResultSharesNothing(t *testing.T) {
	base := mustJSON(t, `{"m":{"a":{"x":1}}}`)
	top := mustJSON(t, `{"m":{"l":[{"y":1}]},"n":{"z":1}}`)
	got := Merge(base, top)
	m := got["m"].(map[string]any)
	m["a"].(map[string]any)["x"] = 2.0
	m["l"].([]any)[0].(map[string]any)["y"] = 2.0
	got["n"].(map[string]any)["z"] = 2.0

	if diff := cmp.Diff(mustJSON(t, `{"m":{"a":{"x":1}}}`), base); diff != "" {
		t.Errorf("base changed through the result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mustJSON(t, `{"m":{"l":[{"y":1}]},"n":{"z":1}}`), top); diff != "" {
		t.Errorf("top changed through the result (-want +got):\n%s", diff)
	}
}

func TestMergeAcceptsNestedValues(t *testing.T) {
	got := Merge(Values{"m": Values{"a": 1.0}}, Values{"m": Values{"b": 2.0}})
	want := Values{"m": map[string]any{"a": 1.0, "b": 2.0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge() mismatch (-want +got):\n%s", diff)
	}
}
