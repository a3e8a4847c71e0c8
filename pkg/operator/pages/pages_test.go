package pages

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestHookInfos(t *testing.T) {
	cfg, err := hook.ParseConfig("check", []byte(`configVersion: v1
beforeHelm: 5
kubernetes:
- {name: things, apiVersion: v1, kind: ConfigMap, queue: slow}
schedule:
- {name: nightly, crontab: "0 3 * * *"}
kubernetesValidating:
- name: check.example.com
  rules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}]
`), hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	got := hookInfos([]*binding.Hook{{Name: "hooks/check", Config: cfg}, {Name: "hooks/unloaded"}})
	want := []status.HookInfo{
		{Name: "hooks/check", Bindings: []status.BindingInfo{
			{Type: "beforeHelm", Detail: "order 5"},
			{Type: "kubernetes", Name: "things", Detail: "v1 ConfigMap, queue slow"},
			{Type: "schedule", Name: "nightly", Detail: "0 3 * * *, queue main"},
			{Type: "kubernetesValidating", Name: "check.example.com"},
		}},
		{Name: "hooks/unloaded"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook infos (-want +got):\n%s", diff)
	}
}

// runs is a RunLog of one module's runs.
type runs map[string][]status.Run

func (r runs) Runs(name string) []status.Run { return r[name] }
func (r runs) All() []status.ModuleRuns {
	out := make([]status.ModuleRuns, 0, len(r))
	for name, rs := range r {
		out = append(out, status.ModuleRuns{Module: name, Runs: rs})
	}
	return out
}

func TestModuleDetailOfNoModule(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "010-a", "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{dir}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := New(mods, func(string) []*binding.Hook { return nil }, runs{"a": {{Outcome: "ok"}}}, nil, nil)
	if _, err := p.ModuleDetail(t.Context(), "nope"); err == nil {
		t.Error("a page of a module that does not exist was answered")
	}
	if diff := cmp.Diff([]status.ModuleRuns{{Module: "a", Runs: []status.Run{{Outcome: "ok"}}}}, p.ModuleRuns()); diff != "" {
		t.Errorf("module runs (-want +got):\n%s", diff)
	}
}
