package operator

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// fakeObjects records what the operator hands to the Module objects.
type fakeObjects struct {
	mu      sync.Mutex
	updates map[string][]moduleobject.State
	prunes  [][]string
	holds   []bool
}

func (f *fakeObjects) Hold(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds = append(f.holds, on)
}

func (*fakeObjects) Run(ctx context.Context) error { <-ctx.Done(); return nil }

func (f *fakeObjects) Update(s moduleobject.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates[s.Name] = append(f.updates[s.Name], s)
}

func (f *fakeObjects) Prune(modules []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prunes = append(f.prunes, modules)
}

// phases returns a module's phases as handed over, repeats collapsed.
func (f *fakeObjects) phases(name string) []status.Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.updates[name]
	out := make([]status.Phase, 0, len(u))
	for i := range u {
		out = append(out, u[i].Phase)
	}
	return slices.Compact(out)
}

func (f *fakeObjects) last(name string) moduleobject.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.updates[name]
	return u[len(u)-1]
}

// TestModuleStateReachesModuleObjects: every state change of a module is
// handed over, ending in its release, values checksum and last run; the
// objects are pruned once, after the plan.
func TestModuleStateReachesModuleObjects(t *testing.T) {
	runner := &fakeRunner{}
	objs := &fakeObjects{updates: map[string][]moduleobject.State{}}
	o, _ := newTestOperatorWith(t, runner, func(d *Deps) { d.ModuleObjects = objs })
	runUntil(t, o, o.Ready)

	if diff := cmp.Diff([]status.Phase{"", status.PhaseWaiting, status.PhaseRunning, status.PhaseReady}, objs.phases("a")); diff != "" {
		t.Errorf("phases of a (-want +got):\n%s", diff)
	}
	a := objs.last("a")
	if !a.Enabled || !a.HasChart || a.Namespace != "ns" || a.Revision != 1 || a.ValuesChecksum == "" || a.LastRun.IsZero() {
		t.Errorf("last state of a = %+v, want enabled, its release ns/a at revision 1, a values checksum and a last run", a)
	}
	if b := objs.last("b"); b.HasChart || b.Phase != status.PhaseReady || b.ValuesChecksum != "" {
		t.Errorf("last state of b = %+v, want Ready without a chart", b)
	}
	if diff := cmp.Diff([][]string{{"a", "b"}}, objs.prunes); diff != "" {
		t.Errorf("prunes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, false}, objs.holds); diff != "" {
		t.Errorf("holds during the converge (-want +got):\n%s", diff)
	}
}
