package config

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/addon-operator/addon-operator/pkg/values"
)

const eventTimeout = 10 * time.Second

// These tests use client-go's fake clientset to run Run under the race
// detector; e2e/config covers the same paths against a real API server.

func TestRunSendsInitialEventThenChanges(t *testing.T) {
	client := fake.NewClientset()
	s := NewSource(client, "ns", "cfg", nil)
	events := s.Events()
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(ctx) }()

	ev := receive(t, events)
	if ev.Err != nil || ev.ResourceVersion != "" || !ev.Absent || !Diff(nil, ev.Config).Empty() {
		t.Fatalf("initial event = %+v, want an empty Config for the absent ConfigMap", ev)
	}

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns", ResourceVersion: "5"},
		Data:       map[string]string{"global": "a: 1"},
	}
	if _, err := client.CoreV1().ConfigMaps("ns").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = receive(t, events)
	if ev.Err != nil || ev.Absent {
		t.Fatalf("event after create = %+v, want a present, valid ConfigMap", ev)
	}
	if diff := cmp.Diff(values.Values{"a": float64(1)}, ev.Config.Global); diff != "" {
		t.Errorf("global after create mismatch (-want +got):\n%s", diff)
	}

	cm.Data = map[string]string{"fooEnabled": "maybe"}
	cm.ResourceVersion = "6"
	if _, err := client.CoreV1().ConfigMaps("ns").Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = receive(t, events)
	if !errors.Is(ev.Err, ErrInvalid) || ev.Config != nil || ev.ResourceVersion != "6" {
		t.Errorf("event after a bad update = %+v, want an ErrInvalid error at resourceVersion 6", ev)
	}

	if err := client.CoreV1().ConfigMaps("ns").Delete(t.Context(), "cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = receive(t, events)
	if ev.Err != nil || !ev.Absent || ev.ResourceVersion != "" || !Diff(nil, ev.Config).Empty() {
		t.Errorf("event after delete = %+v, want an absent ConfigMap with an empty Config", ev)
	}

	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run() after cancel = %v, want nil", err)
		}
	case <-time.After(eventTimeout):
		t.Fatal("Run() did not return after its context was cancelled")
	}
}

func TestLoad(t *testing.T) {
	client := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "ns"},
		Data:       map[string]string{"global": "- list"},
	}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: "ns"},
		Data:       map[string]string{"fooEnabled": "false"},
	})
	got, err := NewSource(client, "ns", "", nil).Load(t.Context())
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if diff := cmp.Diff(map[string]bool{"foo": false}, got.Enabled); diff != "" {
		t.Errorf("Load() enabled mismatch (-want +got):\n%s", diff)
	}

	got, err = NewSource(client, "ns", "absent", nil).Load(t.Context())
	if err != nil || !Diff(nil, got).Empty() {
		t.Errorf("Load() of an absent ConfigMap = %+v, %v; want an empty Config", got, err)
	}

	_, err = NewSource(client, "ns", "bad", nil).Load(t.Context())
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Load() of an invalid ConfigMap error = %v, want ErrInvalid", err)
	}
}

func receive(t *testing.T, events <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(eventTimeout):
		t.Fatal("no config event")
		return Event{}
	}
}
