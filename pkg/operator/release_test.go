package operator

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

func TestModuleDeleteLeavesForeignRelease(t *testing.T) {
	tests := []struct {
		name   string
		status helm.Status
		want   []string
	}{
		{name: "ours", status: helm.Status{Revision: 1, State: "deployed", Owned: true},
			want: []string{"b:beforeDeleteHelm", "uninstall:b", "b:afterDeleteHelm"}},
		{name: "not ours", status: helm.Status{Revision: 1, State: "deployed"}, want: []string{"b:afterDeleteHelm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{configs: map[string]string{
				"mod":    "configVersion: v1\nbeforeDeleteHelm: 1\nafterDeleteHelm: 1\n",
				"global": "configVersion: v1\n",
			}}
			o, rel := newTestOperator(t, runner)
			rel.status = map[string]helm.Status{"b": tt.status}
			if err := o.moduleDelete(t.Context(), "b"); err != nil {
				t.Fatalf("moduleDelete: %v", err)
			}
			if diff := cmp.Diff(tt.want, runner.recorded()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeEvents records the Events the operator sends.
type fakeEvents struct {
	mu     sync.Mutex
	events []string
}

func (*fakeEvents) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeEvents) ModuleFailed(module string, err error) {
	f.add("failed " + module + ": " + err.Error())
}
func (f *fakeEvents) ModuleRecovered(module string, _ int) { f.add("recovered " + module) }
func (f *fakeEvents) ObjectDrifted(module, object string, _ []string, _ bool) {
	f.add("drifted " + module + " " + object)
}
func (f *fakeEvents) ReleaseRecordDeleted(module, record string) {
	f.add("record deleted " + module + " " + record)
}

func (f *fakeEvents) add(e string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func TestRouteHealReportsDeletedReleaseRecord(t *testing.T) {
	tests := []struct {
		name       string
		object     heal.ObjectRef
		wantEvents []string
	}{
		{name: "release record", object: heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "sh.helm.release.v1.a.v3"},
			wantEvents: []string{"record deleted a Secret ns/sh.helm.release.v1.a.v3"}},
		{name: "release object", object: heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "a-token"}},
		{name: "another release's record", object: heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "sh.helm.release.v1.b.v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _ := newTestOperator(t, &fakeRunner{})
			events := &fakeEvents{}
			o.moduleEvents = events
			o.state.update("a", func(s *moduleState) { s.Enabled = true })
			o.routeHeal(heal.Event{Module: "a", Object: tt.object})
			if diff := cmp.Diff(tt.wantEvents, events.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"a"}, requested(o)); diff != "" {
				t.Errorf("module runs requested (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRouteHealIgnoresReleaseOfNoModule(t *testing.T) {
	o, _ := newTestOperator(t, &fakeRunner{})
	events := &fakeEvents{}
	o.moduleEvents = events
	// A purged release's records are deleted under its name, which is no module.
	o.routeHeal(heal.Event{Module: "gone", Object: heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "sh.helm.release.v1.gone.v1"}})
	if len(events.events) != 0 || len(requested(o)) != 0 {
		t.Errorf("events %v, runs requested %v; want none", events.events, requested(o))
	}
}
