package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/module"
)

// modulesOf writes module directories (name -> module.yaml content, ""
// for none) and discovers them.
func modulesOf(t *testing.T, dirs map[string]string) *module.Set {
	t.Helper()
	set, err := tryModules(t, dirs)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// tryModules discovers modules made of dirs (directory name: module.yaml,
// "" for none).
func tryModules(t *testing.T, dirs map[string]string) (*module.Set, error) {
	t.Helper()
	root := t.TempDir()
	for dir, def := range dirs {
		path := filepath.Join(root, dir)
		if err := os.MkdirAll(path, 0o750); err != nil {
			t.Fatal(err)
		}
		if def != "" {
			if err := os.WriteFile(filepath.Join(path, module.DefinitionFile), []byte(def), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return module.Discover(module.Options{ModulesDirs: []string{root}, UnnumberedOrder: module.DefaultUnnumberedOrder})
}

func TestOrder(t *testing.T) {
	set := modulesOf(t, map[string]string{
		"010-a":       "",
		"020-b":       "",
		"crd":         "weight: 50\n",
		"webhook":     "weight: 5\nrequires: {crd: \"\"}\n",
		"ingress":     "weight: 5\nrequires: {webhook: \"\"}\n",
		"independent": "weight: 7\n",
	})
	// a and b, without module.yaml, wait for every module of a lower
	// order: webhook and ingress, which wait for crd.
	want := []string{"independent", "crd", "webhook", "ingress", "a", "b"}
	if diff := cmp.Diff(want, Order(set)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// step is one event of a schedule test: the modules that finished (and
// whether ready) and the modules that may start next.
type step struct {
	// applied parks first attempts after their Helm step, before finished.
	applied  []string
	finished map[string]bool
	next     []string
	done     bool
}

// scheduleCase is one walk of a schedule: the modules on disk (name to
// module.yaml, "" for none), the run, the first modules to start and the
// steps after.
type scheduleCase struct {
	name  string
	dirs  map[string]string
	run   []string
	first []string
	steps []step
}

func TestSchedule(t *testing.T) {
	for _, tt := range scheduleCases() {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSchedule(modulesOf(t, tt.dirs), tt.run)
			if diff := cmp.Diff(tt.first, s.Next()); diff != "" {
				t.Fatalf("first modules (-want +got):\n%s", diff)
			}
			for i, st := range tt.steps {
				for _, name := range st.applied {
					s.Applied(name)
				}
				for name, ok := range st.finished {
					s.Finished(name, ok)
				}
				if diff := cmp.Diff(st.next, s.Next()); diff != "" {
					t.Errorf("step %d: next (-want +got):\n%s", i, diff)
				}
				if got := s.Done(); got != st.done {
					t.Errorf("step %d: done = %v, want %v", i, got, st.done)
				}
			}
		})
	}
}

func scheduleCases() []scheduleCase {
	return []scheduleCase{
		{
			name:  "modules without module.yaml keep order groups; a failed group still lets the next start",
			dirs:  map[string]string{"010-a": "", "010-b": "", "020-c": ""},
			run:   []string{"a", "b", "c"},
			first: []string{"a", "b"},
			steps: []step{
				{finished: map[string]bool{"a": false}},
				{finished: map[string]bool{"b": true}, next: []string{"c"}},
				{finished: map[string]bool{"c": true}, done: true},
			},
		},
		{
			name: "a requirement that is not ready holds its dependent while an independent branch goes on",
			dirs: map[string]string{
				"crd":   "weight: 10\n",
				"hooks": "weight: 20\nrequires: {crd: \"\"}\n",
				"other": "weight: 30\n",
				"more":  "weight: 40\nrequires: {other: \"\"}\n",
			},
			run:   []string{"crd", "hooks", "other", "more"},
			first: []string{"crd", "other"},
			steps: []step{
				{finished: map[string]bool{"crd": false}},
				{finished: map[string]bool{"other": true}, next: []string{"more"}},
				{finished: map[string]bool{"more": true}, done: true},
				{finished: map[string]bool{"crd": true}, next: []string{"hooks"}},
				{finished: map[string]bool{"hooks": true}, done: true},
			},
		},
		{
			name:  "an order group waits for the Helm step of the groups before it, not for their objects",
			dirs:  map[string]string{"010-a": "", "020-b": "", "030-c": ""},
			run:   []string{"a", "b", "c"},
			first: []string{"a"},
			steps: []step{
				{applied: []string{"a"}, next: []string{"b"}},
				{applied: []string{"b"}, next: []string{"c"}},
				// The pass is over only when every first attempt ended.
				{finished: map[string]bool{"c": true}},
				{finished: map[string]bool{"a": true, "b": true}, done: true},
			},
		},
		{
			name:  "a required module releases its dependents when ready, not when applied",
			dirs:  map[string]string{"base": "weight: 10\n", "app": "weight: 20\nrequires: {base: \"\"}\n"},
			run:   []string{"base", "app"},
			first: []string{"base"},
			steps: []step{
				{applied: []string{"base"}},
				{finished: map[string]bool{"base": true}, next: []string{"app"}},
				{finished: map[string]bool{"app": true}, done: true},
			},
		},
		{
			name:  "a module of the plan without its requirement in the run is held",
			dirs:  map[string]string{"a": "", "b": "requires: {a: \"\"}\n"},
			run:   []string{"b"},
			steps: []step{{done: true}},
		},
	}
}

func TestDisableUnmet(t *testing.T) {
	set := modulesOf(t, map[string]string{
		"a": "",
		"b": "requires: {a: \"\"}\n",
		"c": "requires: {b: \"\"}\n",
		"d": "",
	})
	got := DisableUnmet(set, []Decision{
		{Name: "a", Enabled: false, By: "configmap"},
		{Name: "b", Enabled: true, By: "configmap"},
		{Name: "c", Enabled: true, By: "configmap"},
		{Name: "d", Enabled: true, By: "configmap"},
	})
	want := []Decision{
		{Name: "a", Enabled: false, By: "configmap"},
		{Name: "b", Enabled: false, By: "requirement", Reason: "requires a, which is disabled"},
		{Name: "c", Enabled: false, By: "requirement", Reason: "requires b, which is disabled"},
		{Name: "d", Enabled: true, By: "configmap"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
