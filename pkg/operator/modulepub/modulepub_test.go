package modulepub

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// fakeWriter records what the publisher hands over; the test calls it
// from one goroutine.
type fakeWriter struct {
	updates []moduleobject.State
	prunes  [][]string
	holds   []bool
	ran     bool
}

func (f *fakeWriter) Run(context.Context) error   { f.ran = true; return nil }
func (f *fakeWriter) Update(s moduleobject.State) { f.updates = append(f.updates, s) }
func (f *fakeWriter) Prune(modules []string)      { f.prunes = append(f.prunes, modules) }
func (f *fakeWriter) Hold(on bool)                { f.holds = append(f.holds, on) }

func discover(t *testing.T) *module.Set {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"modules/010-a/Chart.yaml":        "apiVersion: v2\nname: a\nversion: 1.2.3\n",
		"modules/010-a/templates/cm.yaml": "kind: ConfigMap",
		"modules/020-b/hooks/.keep":       "",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{filepath.Join(dir, "modules")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// TestPublisher: a module's state reaches the writer with what its
// directory says; the first plan prunes, every plan holds and every
// converge's end releases the writes.
func TestPublisher(t *testing.T) {
	mods := discover(t)
	w := &fakeWriter{}
	p := New(w, mods, "ns", func(name string) moduleobject.State {
		return moduleobject.State{Enabled: name == "a", Phase: status.PhaseReady, Revision: 2}
	}, nil)
	if err := p.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.Publish("a")
	p.Publish("gone") // no module: nothing
	p.Planned()
	p.Converged()
	p.Planned()

	want := []moduleobject.State{
		{Name: "a", Enabled: true, Phase: status.PhaseReady, Revision: 2, HasChart: true, Namespace: "ns", ChartVersion: "1.2.3"},
		{Name: "b", Phase: status.PhaseReady, Revision: 2, Namespace: "ns"},
		{Name: "a", Enabled: true, Phase: status.PhaseReady, Revision: 2, HasChart: true, Namespace: "ns", ChartVersion: "1.2.3"},
	}
	ignoreLabels := cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".Labels" || p.Last().String() == ".Warnings"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, w.updates, ignoreLabels); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	if !w.ran {
		t.Error("the writer did not run")
	}
	if diff := cmp.Diff([][]string{{"a", "b"}}, w.prunes); diff != "" {
		t.Errorf("prunes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, false, true}, w.holds); diff != "" {
		t.Errorf("holds (-want +got):\n%s", diff)
	}
}

// TestNoWriter: without a writer there is no publisher, and a nil one
// does nothing.
func TestNoWriter(t *testing.T) {
	p := New(nil, discover(t), "ns", func(string) moduleobject.State {
		t.Error("state read without a writer")
		return moduleobject.State{}
	}, nil)
	if p != nil || p.Enabled() {
		t.Fatalf("New(nil, ...) = %v, want nil", p)
	}
	p.Publish("a")
	p.Planned()
	p.Converged()
	if err := p.Run(t.Context()); err != nil {
		t.Errorf("Run: %v", err)
	}
}
