package bench

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestGenerateIsDiscovered(t *testing.T) {
	l, err := Generate(t.TempDir(), 5, 2, Workload{Hooks: HooksJQ})
	if err != nil {
		t.Fatal(err)
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{l.ModulesDir}, GlobalHooksDir: l.GlobalHooksDir})
	if err != nil {
		t.Fatal(err)
	}
	type mod struct {
		Name    string
		Order   int
		Helm    bool
		Enabled bool
		Hooks   []string
	}
	mods := set.Modules()
	got := make([]mod, 0, len(mods))
	for _, m := range mods {
		hooks := make([]string, 0, len(m.Hooks()))
		for _, h := range m.Hooks() {
			hooks = append(hooks, filepath.Base(h))
		}
		got = append(got, mod{m.Name(), m.Order(), m.IsHelm(), *m.CommonEnabled(), hooks})
	}
	hooks := []string{"before-helm", "watch"}
	want := []mod{
		{"mod1", 10, true, true, hooks}, {"mod2", 10, true, true, hooks},
		{"mod3", 20, true, true, hooks}, {"mod4", 20, true, true, hooks},
		{"mod5", 30, true, true, hooks},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovered modules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mod1", "mod2", "mod3", "mod4", "mod5"}, l.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestGeneratedHookConfigs(t *testing.T) {
	for _, h := range []Hooks{HooksJQ, HooksSh} {
		t.Run(string(h), func(t *testing.T) { testGeneratedHookConfigs(t, Workload{Hooks: h}) })
	}
}

func testGeneratedHookConfigs(t *testing.T, w Workload) {
	t.Helper()
	l, err := Generate(t.TempDir(), 1, 1, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvNamespace, "bench-ns")
	dir := filepath.Join(l.ModulesDir, "010-mod1", "hooks")
	exec := &hook.Executor{TempDir: t.TempDir()}

	out, err := exec.Config(t.Context(), filepath.Join(dir, "before-helm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := hook.ParseConfig("before-helm", out, hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	if order, ok := cfg.Order(hook.BeforeHelm); !ok || order != 10 {
		t.Errorf("before-helm: beforeHelm order %v, %v; want 10", order, ok)
	}

	out, err = exec.Config(t.Context(), filepath.Join(dir, "watch"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = hook.ParseConfig("watch", out, hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kubernetes) != 1 {
		t.Fatalf("watch: %d kubernetes bindings, want 1", len(cfg.Kubernetes))
	}
	b := cfg.Kubernetes[0]
	got := []any{b.Kind, b.Namespace.NameSelector.MatchNames, b.LabelSelector.MatchLabels, b.JqFilter, b.Group}
	want := []any{"ConfigMap", []string{"bench-ns"}, map[string]string{WatchLabel: "mod1"}, ".data.value", "watched"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch binding (-want +got):\n%s", diff)
	}
}

func TestGeneratedHookRuns(t *testing.T) {
	for _, h := range []Hooks{HooksJQ, HooksSh} {
		t.Run(string(h), func(t *testing.T) { testGeneratedHookRuns(t, Workload{Hooks: h}) })
	}
}

func testGeneratedHookRuns(t *testing.T, w Workload) {
	t.Helper()
	l, err := Generate(t.TempDir(), 1, 1, w)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(l.ModulesDir, "010-mod1", "hooks")
	sync := hook.BindingContext{
		Binding: "watched", Type: hook.TypeSynchronization,
		Objects:   []hook.FilteredObject{{FilterResult: raw(`"b"`)}, {FilterResult: raw(`"a"`)}},
		Snapshots: map[string][]hook.FilteredObject{"watched": {{FilterResult: raw(`"b"`)}, {FilterResult: raw(`"a"`)}}},
	}
	group := hook.BindingContext{
		Binding: "watched", Type: hook.TypeGroup, GroupName: "watched",
		Snapshots: map[string][]hook.FilteredObject{"watched": {{FilterResult: raw(`"c"`)}}},
	}
	vals := values.Values{
		"global": map[string]any{"enabledModules": []any{"mod1", "mod10"}},
		"mod1":   map[string]any{"config": "abc", "watched": "x y"},
		"mod10":  map[string]any{"config": "other"},
	}
	tests := []struct {
		name     string
		hook     string
		contexts []hook.BindingContext
		want     values.Patch
	}{
		{"beforeHelm derives fromHook", "before-helm", []hook.BindingContext{{Binding: "beforeHelm"}},
			values.Patch{{Op: "add", Path: "/mod1/fromHook", Value: "hook-abc"}}},
		{"synchronization lists every object once", "watch", []hook.BindingContext{sync},
			values.Patch{{Op: "add", Path: "/mod1/watched", Value: "a b"}}},
		{"group event lists the snapshot", "watch", []hook.BindingContext{group},
			values.Patch{{Op: "add", Path: "/mod1/watched", Value: "c"}}},
		{"no objects", "watch", []hook.BindingContext{{Binding: "watched", Type: hook.TypeSynchronization}},
			values.Patch{{Op: "add", Path: "/mod1/watched", Value: ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec := &hook.Executor{TempDir: t.TempDir()}
			res, err := exec.Run(t.Context(), hook.Run{Path: filepath.Join(dir, tt.hook), Contexts: tt.contexts, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.ValuesPatch); diff != "" {
				t.Errorf("values patch (-want +got):\n%s", diff)
			}
		})
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestGenerateChainsIsDiscovered(t *testing.T) {
	l, err := GenerateChains(t.TempDir(), 5, 2, Workload{Hooks: HooksSh})
	if err != nil {
		t.Fatal(err)
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{l.ModulesDir}, GlobalHooksDir: l.GlobalHooksDir})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range set.Modules() {
		got[m.Name()] = m.Requires()
	}
	want := map[string][]string{"mod1": nil, "mod2": nil, "mod3": {"mod1"}, "mod4": {"mod2"}, "mod5": {"mod3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
}
