package config_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// eventTimeout is generous: the machine running e2e tests is shared.
const eventTimeout = 30 * time.Second

// startSource runs a Source for the default ConfigMap in ns until the test
// ends, and checks that Run then returns nil.
func startSource(t *testing.T, client kubernetes.Interface, ns string) <-chan config.Event {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := config.NewSource(client, ns, "", log)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run() = %v, want nil after cancel", err)
			}
		case <-time.After(eventTimeout):
			t.Error("Run() did not return after cancel")
		}
	})
	return s.Events()
}

func next(t *testing.T, events <-chan config.Event) config.Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(eventTimeout):
		t.Fatal("no config event")
		return config.Event{}
	}
}

// nextGood returns the next event and fails unless it carries a Config.
func nextGood(t *testing.T, events <-chan config.Event) config.Event {
	t.Helper()
	ev := next(t, events)
	if ev.Err != nil || ev.Config == nil {
		t.Fatalf("config event = %+v, want a parsed Config", ev)
	}
	return ev
}

func createConfigMap(t *testing.T, client kubernetes.Interface, ns string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.DefaultName}, Data: data}
	created, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	return created
}

func updateConfigMap(t *testing.T, client kubernetes.Interface, cm *corev1.ConfigMap, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm = cm.DeepCopy()
	cm.Data = data
	updated, err := client.CoreV1().ConfigMaps(cm.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	return updated
}

func TestInitialEventForAbsentConfigMap(t *testing.T) {
	ns := cp.Namespace(t)
	ev := nextGood(t, startSource(t, cp.Clientset(t), ns))
	if ev.ResourceVersion != "" || !ev.Absent {
		t.Errorf("resourceVersion = %q, absent = %v; want empty and true for an absent ConfigMap", ev.ResourceVersion, ev.Absent)
	}
	if ch := config.Diff(nil, ev.Config); !ch.Empty() {
		t.Errorf("initial config differs from empty: %+v", ch)
	}
}

func TestInitialEventCarriesExistingConfigMap(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	cm := createConfigMap(t, client, ns, map[string]string{
		"global": "clusterName: test\n", "certManager": "issuer: le\n", "certManagerEnabled": "false",
	})
	ev := nextGood(t, startSource(t, client, ns))
	if ev.ResourceVersion != cm.ResourceVersion {
		t.Errorf("resourceVersion = %q, want %q: the first event must come after the informer synced",
			ev.ResourceVersion, cm.ResourceVersion)
	}
	want := &config.Config{
		Global:  values.Values{"clusterName": "test"},
		Modules: map[string]values.Values{"certManager": {"issuer": "le"}},
		Enabled: map[string]bool{"certManager": false},
	}
	if diff := cmp.Diff(want, ev.Config, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("initial config mismatch (-want +got):\n%s", diff)
	}
}

func TestCreateUpdateDeleteProduceEvents(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	events := startSource(t, client, ns)
	prev := nextGood(t, events).Config

	steps := []struct {
		name string
		data map[string]string
		want config.Change
	}{
		{"create", map[string]string{"global": "a: 1", "certManager": "x: 1"},
			config.Change{GlobalChanged: true, ModulesChanged: []string{"certManager"}}},
		{"module values", map[string]string{"global": "a: 1", "certManager": "x: 2"},
			config.Change{ModulesChanged: []string{"certManager"}}},
		{"enabled only, section unchanged", map[string]string{"global": "a: 1", "certManager": "x: 2", "certManagerEnabled": "false"},
			config.Change{EnabledChanged: []string{"certManager"}}},
		{"enabled flipped", map[string]string{"global": "a: 1", "certManager": "x: 2", "certManagerEnabled": "true"},
			config.Change{EnabledChanged: []string{"certManager"}}},
	}
	var cm *corev1.ConfigMap
	for _, step := range steps {
		if cm == nil {
			cm = createConfigMap(t, client, ns, step.data)
		} else {
			cm = updateConfigMap(t, client, cm, step.data)
		}
		ev := nextGood(t, events)
		if ev.Absent {
			t.Errorf("%s: event says the ConfigMap is absent", step.name)
		}
		if ev.ResourceVersion != cm.ResourceVersion {
			t.Errorf("%s: resourceVersion = %q, want %q", step.name, ev.ResourceVersion, cm.ResourceVersion)
		}
		if diff := cmp.Diff(step.want, config.Diff(prev, ev.Config)); diff != "" {
			t.Errorf("%s: change mismatch (-want +got):\n%s", step.name, diff)
		}
		prev = ev.Config
	}

	if err := client.CoreV1().ConfigMaps(ns).Delete(t.Context(), config.DefaultName, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	ev := nextGood(t, events)
	if ev.ResourceVersion != "" || !ev.Absent || !config.Diff(nil, ev.Config).Empty() {
		t.Errorf("event after delete = %+v, want an absent ConfigMap: an empty Config without resourceVersion", ev)
	}
}

func TestBadYAMLProducesErrorEvent(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	cm := createConfigMap(t, client, ns, map[string]string{"global": "a: 1"})
	events := startSource(t, client, ns)
	good := nextGood(t, events)

	cm = updateConfigMap(t, client, cm, map[string]string{"global": "a: 1\nb: [2\n", "fooEnabled": "yes"})
	ev := next(t, events)
	if ev.Config != nil || !errors.Is(ev.Err, config.ErrInvalid) {
		t.Fatalf("event after a bad update = %+v, want an ErrInvalid error without Config", ev)
	}
	if ev.ResourceVersion != cm.ResourceVersion {
		t.Errorf("error event resourceVersion = %q, want %q", ev.ResourceVersion, cm.ResourceVersion)
	}
	var keyErr *config.KeyError
	if !errors.As(ev.Err, &keyErr) || keyErr.Key != "fooEnabled" {
		t.Errorf("error %v: first key error = %+v, want one for fooEnabled (keys in order)", ev.Err, keyErr)
	}

	cm = updateConfigMap(t, client, cm, map[string]string{"global": "a: 1"})
	fixed := nextGood(t, events)
	if fixed.ResourceVersion != cm.ResourceVersion {
		t.Errorf("resourceVersion after the fix = %q, want %q", fixed.ResourceVersion, cm.ResourceVersion)
	}
	if ch := config.Diff(good.Config, fixed.Config); !ch.Empty() {
		t.Errorf("fixed config differs from the last good one: %+v", ch)
	}
}

func TestOtherConfigMapsAreIgnored(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	events := startSource(t, client, ns)
	nextGood(t, events)

	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string]string{"global": "["}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), other, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create other configmap: %v", err)
	}
	cm := createConfigMap(t, client, ns, map[string]string{"global": "a: 1"})
	ev := nextGood(t, events)
	if ev.ResourceVersion != cm.ResourceVersion {
		t.Errorf("next event resourceVersion = %q, want %q of the watched ConfigMap", ev.ResourceVersion, cm.ResourceVersion)
	}
}

func TestLoad(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	s := config.NewSource(client, ns, "", nil)
	got, err := s.Load(t.Context())
	if err != nil || !config.Diff(nil, got).Empty() {
		t.Errorf("Load() of an absent ConfigMap = %+v, %v; want an empty Config", got, err)
	}
	createConfigMap(t, client, ns, map[string]string{"fooEnabled": "true", "global": "- not a map"})
	_, err = s.Load(t.Context())
	if !errors.Is(err, config.ErrInvalid) {
		t.Errorf("Load() of an invalid ConfigMap error = %v, want ErrInvalid", err)
	}
}
