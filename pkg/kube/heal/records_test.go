package heal

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
)

// record is the metadata of revision version of release rel's Secret, as
// Helm's secret driver labels it.
func record(rel string, version int) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ops",
			Name:      fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel, version),
			Labels:    map[string]string{"owner": "helm", "name": rel, "version": fmt.Sprint(version), "status": "deployed"},
		},
	}
}

func TestRecordWatcherReportsTheNewestRecordOnce(t *testing.T) {
	watches := make(chan schema.GroupVersionResource, 4)
	client := testClient(watches, record("a", 1), record("a", 2), record("b", 1), record("c", 1),
		record("d", 1), record("d", 2), record("e", 1))
	events := make(chan Event)
	w, err := NewRecordWatcher(RecordWatcherOptions{Metadata: client, Driver: "secret", Namespace: "ops", Events: events})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	if err := w.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	// The fake loses deletions made before its watch is established.
	select {
	case <-watches:
	case <-ctx.Done():
		t.Fatal("the records are never watched")
	}
	secrets := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("ops")
	del := func(rel string, version int) {
		t.Helper()
		if err := secrets.Delete(ctx, record(rel, version).Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() Event {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-ctx.Done():
			t.Fatal("no event")
			return Event{}
		}
	}
	want := func(rel string, version int) Event {
		return Event{Module: rel, Object: ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ops", Name: record(rel, version).Name}}
	}

	// Pruned history (a newer record remains), then the newest: one event.
	// Events arrive in the order of deletions, so the first event received
	// after several deletions shows the earlier ones sent none.
	del("a", 1)
	del("a", 2)
	if diff := cmp.Diff(want("a", 2), next()); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	// The newest first, then older ones: one event.
	del("d", 2)
	del("d", 1)
	del("e", 1)
	for _, ev := range []Event{want("d", 2), want("e", 1)} {
		if diff := cmp.Diff(ev, next()); diff != "" {
			t.Errorf("event (-want +got):\n%s", diff)
		}
	}
	// A paused release: its deletion is the operator's own.
	w.Pause("b")
	del("b", 1)
	del("c", 1)
	if diff := cmp.Diff(want("c", 1), next()); diff != "" {
		t.Errorf("event after a paused deletion (-want +got):\n%s", diff)
	}
	w.Resume("b")
	// Installed again, a's newest record is reported again.
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if err := client.Tracker().Create(gvr, record("a", 1), "ops"); err != nil {
		t.Fatal(err)
	}
	del("a", 1)
	if diff := cmp.Diff(want("a", 1), next()); diff != "" {
		t.Errorf("event after the reinstall (-want +got):\n%s", diff)
	}
}

func TestNewRecordWatcherRejectsUnknownDriver(t *testing.T) {
	scheme := runtime.NewScheme()
	_, err := NewRecordWatcher(RecordWatcherOptions{Metadata: metadatafake.NewSimpleMetadataClient(scheme), Driver: "sql", Namespace: "ops", Events: make(chan Event)})
	if err == nil {
		t.Error("NewRecordWatcher with driver sql succeeded, want an error")
	}
}
