package operator

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// fakeSnapshotMonitors is fakeMonitors that records snapshot-only starts
// and stops.
type fakeSnapshotMonitors struct {
	fakeMonitors
	mu      sync.Mutex
	started []string
	stopped []string
}

func (f *fakeSnapshotMonitors) StartSnapshot(_ context.Context, id string, _ hook.KubernetesBinding) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, id)
	return nil
}

func (f *fakeSnapshotMonitors) StopSnapshot(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, id)
}

// servedWebhooks keeps the entries served, by owner.
type servedWebhooks struct {
	mu     sync.Mutex
	served map[string]webhook.Entries
}

func (s *servedWebhooks) Set(_ context.Context, owner string, e webhook.Entries) error {
	return s.Serve(owner, e)
}
func (s *servedWebhooks) Remove(context.Context, string) error    { return nil }
func (s *servedWebhooks) Run(context.Context) error               { return nil }
func (s *servedWebhooks) RunConfigurations(context.Context) error { return nil }
func (s *servedWebhooks) Problem() string                         { return "" }
func (s *servedWebhooks) Serve(owner string, e webhook.Entries) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.served == nil {
		s.served = map[string]webhook.Entries{}
	}
	s.served[owner] = e
	return nil
}

func (s *servedWebhooks) get(owner string) (webhook.Entries, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.served[owner]
	return e, ok
}

// blockingWatch stands for the configuration watch: its events come from
// the test.
type blockingWatch struct{ events chan config.Event }

func (blockingWatch) Run(ctx context.Context) error { <-ctx.Done(); return nil }

func (w blockingWatch) Events() <-chan config.Event { return w.events }

const standbyHookConfig = `configVersion: v1
kubernetes:
- {name: things, kind: ConfigMap, executeHookOnEvent: [Added]}
- {name: other, kind: ConfigMap}
kubernetesValidating:
- name: unique.example.com
  includeSnapshotsFrom: [things]
  rules: [{apiGroups: [example.com], apiVersions: [v1], resources: [things], operations: [CREATE]}]
`

// TestStandbyAnswersWithConfigAndSnapshots: a standby keeps only the
// bindings webhooks include, serves once the configuration was read, and
// runs webhook hooks with the configured values and the snapshots; the
// leader's start takes the configuration over.
func TestStandbyAnswersWithConfigAndSnapshots(t *testing.T) {
	runner := &fakeRunner{configs: map[string]string{"mod": standbyHookConfig, "global": "configVersion: v1\n"}}
	o, _ := newTestOperator(t, runner)
	mons := &fakeSnapshotMonitors{fakeMonitors: fakeMonitors{objects: map[string][]hook.FilteredObject{"a/hooks/mod/kubernetes/0": {obj("x")}}}}
	srv := &servedWebhooks{}
	events := make(chan config.Event)
	o.monitors = mons
	o.webhooks = o.webhooksWith(srv, admission.StandbyOptions{Enabled: true, Config: blockingWatch{events}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.webhooks.Run(ctx) }()

	send := func(ev config.Event) {
		t.Helper()
		select {
		case events <- ev:
		case <-time.After(10 * time.Second):
			t.Fatal("the standby does not read configuration events")
		}
	}
	first, err := config.Parse(map[string]string{"a": "size: 3\n"})
	if err != nil {
		t.Fatal(err)
	}
	send(config.Event{Config: first, ResourceVersion: "1"})
	poll(t, "module a's webhooks served", func() bool { _, ok := srv.get("a"); return ok })

	mons.mu.Lock()
	started := append([]string(nil), mons.started...)
	mons.mu.Unlock()
	if diff := cmp.Diff([]string{"a/hooks/mod/kubernetes/0", "b/hooks/mod/kubernetes/0"}, started); diff != "" {
		t.Errorf("snapshot monitors (-want +got):\n%s", diff)
	}
	e, _ := srv.get("a")
	if _, err := e.Admission[0].Run(t.Context(), hook.BindingContext{Binding: "unique.example.com", Type: hook.TypeValidating}); err != nil {
		t.Fatalf("webhook run: %v", err)
	}
	runner.mu.Lock()
	got := runner.contexts[len(runner.contexts)-1][0].Snapshots
	runner.mu.Unlock()
	if diff := cmp.Diff(map[string][]hook.FilteredObject{"things": {obj("x")}}, got); diff != "" {
		t.Errorf("webhook run's snapshots (-want +got):\n%s", diff)
	}
	a, _ := o.modules.Module("a")
	if diff := cmp.Diff(values.Values{"a": values.Values{"size": float64(3)}, "global": values.Values{}}, o.store.ConfigFor(a)); diff != "" {
		t.Errorf("config values (-want +got):\n%s", diff)
	}

	// An invalid content and a deletion keep the last valid one.
	send(config.Event{Err: errors.New("bad yaml"), ResourceVersion: "2"})
	send(config.Event{Config: &config.Config{}, Absent: true})
	second, _ := config.Parse(map[string]string{"a": "size: 4\n"})
	send(config.Event{Config: second, ResourceVersion: "3"})
	send(config.Event{Config: second, ResourceVersion: "3"}) // taken once the one before was
	if diff := cmp.Diff(values.Values{"a": values.Values{"size": float64(4)}, "global": values.Values{}}, o.store.ConfigFor(a)); diff != "" {
		t.Errorf("config values after a change (-want +got):\n%s", diff)
	}

	// Leading: the leader reads the configuration afresh; the standby
	// stops taking it.
	if runMonitors := o.webhooks.BecomeLeader(func() { o.store.SetConfig(nil) }); runMonitors {
		t.Error("the leader would run the monitors a standby runs")
	}
	if o.store.Config() != nil {
		t.Error("the standby's configuration outlived leading")
	}
	o.webhooks.DropSnapshots(func(name string) bool { return o.state.get(name).Enabled })
	mons.mu.Lock()
	stopped := slices.Sorted(slices.Values(mons.stopped)) // stopped owner by owner, in no set order
	mons.mu.Unlock()
	if diff := cmp.Diff([]string{"a/hooks/mod/kubernetes/0", "b/hooks/mod/kubernetes/0"}, stopped); diff != "" {
		t.Errorf("snapshot monitors stopped with no module enabled (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
