package operator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// fakeMonitors answers snapshots from a map by binding id.
type fakeMonitors struct {
	objects map[string][]hook.FilteredObject
	enabled []string
}

func (*fakeMonitors) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeMonitors) Start(_ context.Context, id string, _ hook.KubernetesBinding) ([]hook.FilteredObject, error) {
	return f.objects[id], nil
}
func (f *fakeMonitors) EnableEvents(id string)                      { f.enabled = append(f.enabled, id) }
func (f *fakeMonitors) SyncObjects(id string) []hook.FilteredObject { return f.objects[id] }
func (f *fakeMonitors) Snapshot(id string) []hook.FilteredObject    { return f.objects[id] }
func (*fakeMonitors) Stop(string)                                   {}

func obj(name string) hook.FilteredObject {
	return hook.FilteredObject{FilterResult: json.RawMessage(`"` + name + `"`)}
}

func TestMergeTasks(t *testing.T) {
	h1, h2 := &binding.Hook{Name: "h1"}, &binding.Hook{Name: "h2"}
	ev := func(h *binding.Hook, binding string) task {
		return hookRunTask{module: "m", hook: h, bindingID: "m/" + h.Name + "/" + binding, contexts: []hook.BindingContext{{Binding: binding}}}
	}
	tests := []struct {
		name       string
		head, next task
		want       []string // merged contexts' bindings; nil = not merged
	}{
		{"same hook, two bindings", ev(h1, "a"), ev(h1, "b"), []string{"a", "b"}},
		{"other hook", ev(h1, "a"), ev(h2, "a"), nil},
		{"a Synchronization never merges", syncTask{module: "m", hook: h1}, ev(h1, "a"), nil},
		{"lifecycle tasks never merge", moduleDeleteTask{module: "m"}, moduleDeleteTask{module: "m"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mergeTasks(tt.head, tt.next)
			if !ok {
				if tt.want != nil {
					t.Fatalf("not merged, want contexts %v", tt.want)
				}
				return
			}
			var bindings []string
			for _, c := range got.(hookRunTask).contexts {
				bindings = append(bindings, c.Binding)
			}
			if diff := cmp.Diff(tt.want, bindings); diff != "" {
				t.Errorf("merged contexts (-want +got):\n%s", diff)
			}
			if head := tt.head.(hookRunTask); len(head.contexts) != 1 {
				t.Errorf("head task's contexts were modified: %v", head.contexts)
			}
		})
	}
}

func TestCompactGroups(t *testing.T) {
	in := []hook.BindingContext{
		{Binding: "pods", Type: hook.TypeGroup, GroupName: "g"},
		{Binding: "cms", Type: hook.TypeGroup, GroupName: "g"},
		{Binding: "other", Type: hook.TypeEvent},
		{Binding: "cms", Type: hook.TypeGroup, GroupName: "g"},
		{Binding: "tick", Type: hook.TypeSchedule},
		{Binding: "tick", Type: hook.TypeSchedule},
	}
	want := []hook.BindingContext{
		{Binding: "cms", Type: hook.TypeGroup, GroupName: "g"},
		{Binding: "other", Type: hook.TypeEvent},
		{Binding: "cms", Type: hook.TypeGroup, GroupName: "g"},
		{Binding: "tick", Type: hook.TypeSchedule},
		{Binding: "tick", Type: hook.TypeSchedule},
	}
	if diff := cmp.Diff(want, compactGroups(in)); diff != "" {
		t.Errorf("compacted (-want +got):\n%s", diff)
	}
}

func TestSnapshotsAreReadAtExecution(t *testing.T) {
	h := &binding.Hook{Name: "hooks/h", Config: &hook.Config{
		Kubernetes: []hook.KubernetesBinding{
			{Name: "pods", IncludeSnapshotsFrom: []string{"pods", "cms"}},
			{Name: "cms"},
		},
		Schedules: []hook.ScheduleBinding{{Name: "tick", IncludeSnapshotsFrom: []string{"cms", "missing"}}},
	}}
	mon := &fakeMonitors{objects: map[string][]hook.FilteredObject{
		binding.ID("m", h, hook.Kubernetes, 0): {obj("pod-a")},
		binding.ID("m", h, hook.Kubernetes, 1): {obj("cm-a"), obj("cm-b")},
	}}
	o := &Operator{monitors: mon}
	got := o.withSnapshots("m", h, []hook.BindingContext{{Binding: "pods", Type: hook.TypeEvent}, {Binding: "tick", Type: hook.TypeSchedule}, {Binding: "cms", Type: hook.TypeEvent}})
	want := []hook.BindingContext{
		{Binding: "pods", Type: hook.TypeEvent, Snapshots: map[string][]hook.FilteredObject{
			"pods": {obj("pod-a")}, "cms": {obj("cm-a"), obj("cm-b")},
		}},
		{Binding: "tick", Type: hook.TypeSchedule, Snapshots: map[string][]hook.FilteredObject{
			"cms": {obj("cm-a"), obj("cm-b")}, "missing": {},
		}},
		{Binding: "cms", Type: hook.TypeEvent},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("contexts (-want +got):\n%s", diff)
	}
	lifecycle := o.lifecycleSnapshots("m", h)
	if len(lifecycle) != 2 || len(lifecycle["pods"]) != 1 || len(lifecycle["cms"]) != 2 {
		t.Errorf("lifecycle snapshots = %v, want every kubernetes binding of the hook", lifecycle)
	}
	// A hook without kubernetes bindings still gets "snapshots": {} in its
	// lifecycle contexts, as the protocol writes them.
	plain := &binding.Hook{Name: "hooks/plain", Config: &hook.Config{}}
	data, err := json.Marshal(hook.BindingContext{Binding: "beforeHelm", Snapshots: o.lifecycleSnapshots("m", plain)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"snapshots":{}`) {
		t.Errorf("lifecycle context of a hook without kubernetes bindings = %s, want \"snapshots\":{}", data)
	}
}

func TestHookRunOutcomes(t *testing.T) {
	for _, tt := range []struct {
		name        string
		binding     hook.KubernetesBinding
		sync        bool
		fail        bool
		patch       bool
		wantErr     bool
		wantRuns    int
		wantEnabled bool     // events released
		wantQueued  []string // main queue afterwards
	}{
		{name: "sync runs the hook and releases events", binding: hook.KubernetesBinding{Name: "b", ExecuteHookOnSynchronization: true}, sync: true, wantRuns: 1, wantEnabled: true},
		{name: "sync without executeHookOnSynchronization only releases events", binding: hook.KubernetesBinding{Name: "b"}, sync: true, wantEnabled: true},
		{name: "sync values changes queue nothing", binding: hook.KubernetesBinding{Name: "b", ExecuteHookOnSynchronization: true}, sync: true, patch: true, wantRuns: 1, wantEnabled: true},
		{name: "event values change requests a module run", binding: hook.KubernetesBinding{Name: "b"}, patch: true, wantRuns: 1, wantQueued: []string{"a"}},
		{name: "failure fails the task", binding: hook.KubernetesBinding{Name: "b"}, fail: true, wantErr: true, wantRuns: 1},
		{name: "allowed failure is not retried", binding: hook.KubernetesBinding{Name: "b", AllowFailure: true}, fail: true, wantRuns: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{
				patch: func(string, int) values.Patch {
					if tt.patch {
						return values.Patch{{Op: "add", Path: "/a/x", Value: 1.0}}
					}
					return nil
				},
				fail: func(string) error {
					if tt.fail {
						return errors.New("boom")
					}
					return nil
				},
			}
			o, _ := newTestOperator(t, runner)
			mon := &fakeMonitors{}
			o.monitors = mon
			o.state.update("a", func(s *moduleState) { s.Enabled = true })
			h := &binding.Hook{Name: "hooks/k", Config: &hook.Config{Kubernetes: []hook.KubernetesBinding{tt.binding}}}
			id := binding.ID("a", h, hook.Kubernetes, 0)
			o.bindings.Add(id, binding.Ref{Module: "a", Hook: h, Kube: &h.Config.Kubernetes[0]})
			var err error
			if tt.sync {
				err = o.syncRun(t.Context(), "a", []string{id})
			} else {
				err = o.hookRun(t.Context(), id, "a", []hook.BindingContext{{Binding: "b", Type: hook.TypeEvent}})
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("hookRun error = %v, want error %v", err, tt.wantErr)
			}
			if got := len(runner.recorded()); got != tt.wantRuns {
				t.Errorf("hook runs = %d, want %d", got, tt.wantRuns)
			}
			if got := len(mon.enabled) == 1 && o.bindings.IsSynced(id); got != tt.wantEnabled {
				t.Errorf("events released = %v, want %v", got, tt.wantEnabled)
			}
			if diff := cmp.Diff(tt.wantQueued, requested(o), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queued (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSynchronizeCombinesHookBindings checks that a hook gets one
// Synchronization run with the contexts of all its bindings that share a
// queue and Synchronization settings, and separate runs where they differ.
func TestSynchronizeCombinesHookBindings(t *testing.T) {
	kb := func(name, queue string, execute bool) hook.KubernetesBinding {
		// Bindings of named queues are not waited for, so synchronize
		// returns and the test runs their queued task itself.
		return hook.KubernetesBinding{Name: name, Queue: queue, ExecuteHookOnSynchronization: execute, WaitForSynchronization: queue == "" || queue == "main"}
	}
	tests := []struct {
		name     string
		bindings []hook.KubernetesBinding
		want     [][]string // per run on main, the contexts' bindings
		queued   map[string][]string
	}{
		{
			name:     "all on main: one run",
			bindings: []hook.KubernetesBinding{kb("pods", "", true), kb("cms", "", true), kb("nss", "main", true)},
			want:     [][]string{{"pods", "cms", "nss"}},
		},
		{
			name:     "a binding without executeHookOnSynchronization splits the run",
			bindings: []hook.KubernetesBinding{kb("pods", "", true), kb("cms", "", false), kb("nss", "", true)},
			want:     [][]string{{"pods"}, {"nss"}},
		},
		{
			name:     "bindings of a named queue make one queued run",
			bindings: []hook.KubernetesBinding{kb("pods", "", true), kb("cms", "q", true), kb("nss", "q", true)},
			want:     [][]string{{"pods"}},
			queued:   map[string][]string{"q": {"cms", "nss"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{}
			o, _ := newTestOperator(t, runner)
			o.monitors = &fakeMonitors{}
			o.state.update("a", func(s *moduleState) { s.Enabled = true })
			h := &binding.Hook{Name: "hooks/k", Config: &hook.Config{Kubernetes: tt.bindings}}
			var ids []string
			for i := range h.Config.Kubernetes {
				id := binding.ID("a", h, hook.Kubernetes, i)
				o.bindings.Add(id, binding.Ref{Module: "a", Hook: h, Kube: &h.Config.Kubernetes[i]})
				ids = append(ids, id)
			}
			if err := o.synchronize(t.Context(), ids); err != nil {
				t.Fatalf("synchronize: %v", err)
			}
			queued := runQueuedSyncs(t, o, tt.queued)
			if n := len(tt.want) + len(tt.queued); len(runner.contexts) != n {
				t.Fatalf("hook runs = %d, want %d", len(runner.contexts), n)
			}
			var got [][]string
			for _, cs := range runner.contexts[:len(tt.want)] {
				var names []string
				for _, c := range cs {
					if c.Type != hook.TypeSynchronization {
						t.Errorf("context %s has type %q, want Synchronization", c.Binding, c.Type)
					}
					names = append(names, c.Binding)
				}
				got = append(got, names)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runs on main (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.queued, queued, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queued runs (-want +got):\n%s", diff)
			}
			for _, id := range ids {
				if !o.bindings.IsSynced(id) {
					t.Errorf("binding %s not marked synchronized", id)
				}
			}
		})
	}
}

// runQueuedSyncs runs the Synchronization tasks on the queues named in
// want and returns, per queue, the binding names of their tasks.
func runQueuedSyncs(t *testing.T, o *Operator, want map[string][]string) map[string][]string {
	t.Helper()
	queued := map[string][]string{}
	for q := range want {
		for _, it := range o.queues.Get(q).Snapshot().Items {
			st := it.Task.(syncTask)
			for _, id := range st.bindingIDs {
				ref, _ := o.bindings.Get(id)
				queued[q] = append(queued[q], ref.Name())
			}
			if err := o.syncRun(t.Context(), st.module, st.bindingIDs); err != nil {
				t.Fatalf("queued run: %v", err)
			}
		}
	}
	return queued
}
