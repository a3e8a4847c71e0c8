package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// staticView is what TestStaticValues compares of the module under test.
type staticView struct {
	Static        values.Values
	StaticEnabled *bool
	Common        values.Values
	CommonEnabled *bool
	GlobalStatic  values.Values
}

func ptr[T any](v T) *T { return &v }

type valuesCase struct {
	name     string
	entries  map[string]node
	module   string
	want     staticView
	wantLogs []map[string]string
}

func TestModuleStaticValues(t *testing.T) {
	runValuesCases(t, []valuesCase{
		{
			name: "module section and Enabled flag, other keys ignored",
			entries: map[string]node{
				"m1/010-cert-manager/values.yaml": file("certManager:\n  replicas: 2\n  image: {tag: v1}\ncertManagerEnabled: false\nglobal: {ignored: true}\n"),
			},
			module: "cert-manager",
			want: staticView{
				Static:        values.Values{"replicas": float64(2), "image": map[string]any{"tag": "v1"}},
				StaticEnabled: ptr(false),
			},
		},
		{
			name:    "null section counts as present",
			entries: map[string]node{"m1/a/values.yaml": file("a:\n")},
			module:  "a",
		},
		{
			name:    "empty values.yaml",
			entries: map[string]node{"m1/a/values.yaml": file("")},
			module:  "a",
		},
		{
			name:    "values.yaml without the module section warned",
			entries: map[string]node{"m1/a/values.yaml": file("b:\n  x: 1\n")},
			module:  "a",
			wantLogs: []map[string]string{
				warn("module values file has no module section", "module", "a", "path", "$ROOT/m1/a/values.yaml"),
			},
		},
	})
}

func TestCommonStaticValues(t *testing.T) {
	runValuesCases(t, []valuesCase{
		{
			name: "common values merged across dirs, later dir wins",
			entries: map[string]node{
				"m1/values.yaml": file("global: {a: 1, nested: {x: 1, z: 1}, l: [1, 2]}\nfoo: {p: 1, q: {r: 1}}\nfooEnabled: true\n"),
				"m2/values.yaml": file("global: {b: 2, nested: {z: 2}, l: [3]}\nfoo: {q: {s: 2}}\nfooEnabled: false\n"),
				"m2/foo":         dir(),
			},
			module: "foo",
			want: staticView{
				Common:        values.Values{"p": float64(1), "q": map[string]any{"r": float64(1), "s": float64(2)}},
				CommonEnabled: ptr(false),
				GlobalStatic: values.Values{
					"a": float64(1), "b": float64(2), "l": []any{float64(3)},
					"nested": map[string]any{"x": float64(1), "z": float64(2)},
				},
			},
		},
		{
			name: "common Enabled from another dir applies, unset later does not clear it",
			entries: map[string]node{
				"m1/values.yaml":     file("barEnabled: true\n"),
				"m2/values.yaml":     file("global: {}\n"),
				"m2/bar/values.yaml": file("bar: {x: 1}\n"),
			},
			module: "bar",
			want: staticView{
				Static:        values.Values{"x": float64(1)},
				CommonEnabled: ptr(true),
				GlobalStatic:  values.Values{},
			},
		},
		{
			name: "own and common kept apart",
			entries: map[string]node{
				"m1/values.yaml":   file("a: {from: common}\naEnabled: false\n"),
				"m1/a/values.yaml": file("a: {from: own}\naEnabled: true\n"),
			},
			module: "a",
			want: staticView{
				Static:        values.Values{"from": "own"},
				StaticEnabled: ptr(true),
				Common:        values.Values{"from": "common"},
				CommonEnabled: ptr(false),
			},
		},
	})
}

func runValuesCases(t *testing.T, tests []valuesCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := map[string]node{"m1": dir(), "m2": dir()}
			for p, n := range tt.entries {
				entries[p] = n
			}
			_, set, logs, err := discoverTree(t, entries, Options{ModulesDirs: []string{"m1", "m2"}})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			m, ok := set.Module(tt.module)
			if !ok {
				t.Fatalf("module %q not found", tt.module)
			}
			got := staticView{
				Static:        m.StaticValues(),
				StaticEnabled: m.StaticEnabled(),
				Common:        m.CommonValues(),
				CommonEnabled: m.CommonEnabled(),
				GlobalStatic:  set.GlobalStatic(),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs.records(t)); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetImmutable checks that nothing a getter returns aliases the Set.
func TestSetImmutable(t *testing.T) {
	_, set, _, err := discoverTree(t, map[string]node{
		"m/values.yaml":   file("global: {g: {x: 1}}\na: {c: {x: 1}}\naEnabled: true\n"),
		"m/a/values.yaml": file("a: {s: {x: 1}, l: [1]}\naEnabled: true\n"),
		"m/a/hooks/h":     script(),
		"m/b":             dir(),
	}, Options{ModulesDirs: []string{"m"}})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	snapshot := func() any {
		m, _ := set.Module("a")
		return []any{set.GlobalStatic(), m.StaticValues(), *m.StaticEnabled(), m.CommonValues(), *m.CommonEnabled(), m.Hooks(), len(set.Modules())}
	}
	before := snapshot()

	m, _ := set.Module("a")
	set.GlobalStatic()["g"].(map[string]any)["x"] = 2
	m.StaticValues()["s"].(map[string]any)["x"] = 2
	m.StaticValues()["l"].([]any)[0] = 2
	*m.StaticEnabled() = false
	m.CommonValues()["c"].(map[string]any)["x"] = 2
	*m.CommonEnabled() = false
	m.Hooks()[0] = "changed"
	mods := set.Modules()
	mods[0] = nil
	_ = append(mods[:1], nil)

	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("Set changed through a getter (-before +after):\n%s", diff)
	}
	if _, ok := set.Module("absent"); ok {
		t.Error(`Module("absent") found a module`)
	}
}
