package inspect

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

type named string

func (n named) String() string { return "task " + string(n) }

// fakeRenderer keeps the release it was asked to render.
type fakeRenderer struct{ got helm.Release }

func (f *fakeRenderer) Render(_ context.Context, r helm.Release) (*helm.Rendered, error) {
	f.got = r
	return &helm.Rendered{Manifest: "kind: ConfigMap\n"}, nil
}

// newView returns a View over module echo (a chart, values {replicas: 1},
// config {replicas: 2}) and hooks-only (no chart), with global values
// {domain: example.com} and queue snapshots.
func newView(t *testing.T, snaps []queue.Snapshot[named]) (*View, *fakeRenderer) {
	t.Helper()
	dir := t.TempDir()
	for path, content := range map[string]string{
		"values.yaml":                "global:\n  domain: example.com\n",
		"010-echo/values.yaml":       "echo:\n  replicas: 1\n",
		"010-echo/templates/cm.yaml": "kind: ConfigMap\n",
		"020-hooks-only/hooks/.keep": "",
		"020-hooks-only/values.yaml": "hooksOnly: {}\n",
	} {
		path = filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{dir}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(mods)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(map[string]string{"echo": "replicas: 2\n", "global": "tier: test\n"})
	if err != nil {
		t.Fatal(err)
	}
	st.SetConfig(cfg)
	r := &fakeRenderer{}
	return New(func() []queue.Snapshot[named] { return snaps }, st, mods, r), r
}

func TestQueueStatuses(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	v, _ := newView(t, []queue.Snapshot[named]{
		{Name: "main", Status: "running", Items: []queue.Item[named]{{Task: "converge", Queued: at, Failures: 2, LastError: "boom"}}},
		{Name: "q", Status: "idle"},
	})
	want := []status.QueueStatus{
		{Name: "main", Status: "running", Tasks: []status.TaskStatus{{Description: "task converge", Queued: at, Failures: 2, LastError: "boom"}}},
		{Name: "q", Status: "idle", Tasks: []status.TaskStatus{}},
	}
	if diff := cmp.Diff(want, v.QueueStatuses()); diff != "" {
		t.Errorf("queue statuses (-want +got):\n%s", diff)
	}
}

func TestValuesAndConfig(t *testing.T) {
	v, _ := newView(t, nil)
	if got := v.GlobalValues()["domain"]; got != "example.com" {
		t.Errorf("global values' domain = %v, want example.com", got)
	}
	if diff := cmp.Diff(values.Values{"tier": "test"}, v.GlobalConfig()); diff != "" {
		t.Errorf("global config (-want +got):\n%s", diff)
	}
	mv, err := v.ModuleValues("echo")
	if err != nil {
		t.Fatal(err)
	}
	// The configuration layers over the module's static values.
	if got := fmt.Sprint(section(mv, "echo")["replicas"]); got != "2" {
		t.Errorf("echo's values: replicas = %s, want 2 from the configuration", got)
	}
	if _, ok := mv[config.GlobalKey]; !ok {
		t.Errorf("echo's values %v have no global section", mv)
	}
	mc, err := v.ModuleConfig("echo")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(mc["replicas"]); got != "2" {
		t.Errorf("echo's config: replicas = %s, want 2", got)
	}
	for name, f := range map[string]func(string) (values.Values, error){"ModuleValues": v.ModuleValues, "ModuleConfig": v.ModuleConfig} {
		if _, err := f("missing"); err == nil || !strings.Contains(err.Error(), `no module "missing"`) {
			t.Errorf("%s of a module that does not exist: %v, want no module", name, err)
		}
	}
}

// section returns v's key as Values; nil when it is none.
func section(v values.Values, key string) values.Values {
	switch s := v[key].(type) {
	case values.Values:
		return s
	case map[string]any:
		return s
	}
	return nil
}

func TestRenderModule(t *testing.T) {
	v, r := newView(t, nil)
	if _, err := v.RenderModule(t.Context(), "echo"); err != nil {
		t.Fatal(err)
	}
	if r.got.Name != "echo" || !strings.HasSuffix(r.got.ChartDir, "010-echo") {
		t.Errorf("rendered release %q of %q, want echo's chart", r.got.Name, r.got.ChartDir)
	}
	if _, ok := r.got.Values["echo"]; !ok {
		t.Errorf("rendered with values %v, want echo's section", r.got.Values)
	}
	if _, err := v.RenderModule(t.Context(), "hooks-only"); err == nil || !strings.Contains(err.Error(), "has no chart") {
		t.Errorf("render of a module without chart: %v, want has no chart", err)
	}
	if _, err := v.RenderModule(t.Context(), "missing"); err == nil || !strings.Contains(err.Error(), `no module "missing"`) {
		t.Errorf("render of a module that does not exist: %v, want no module", err)
	}
}
