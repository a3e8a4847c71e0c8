package heal

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

const ownerLabel = "addon-operator.io/managed-by"

func TestRecordLabels(t *testing.T) {
	ours := record("a", 2)
	ours.Labels[ownerLabel] = "addon-operator"
	ours.Labels["addon-operator.io/checksum"] = "sum"
	notHelm := record("x", 1)
	notHelm.Labels["owner"] = "someone"
	watches := make(chan schema.GroupVersionResource, 4)
	client := testClient(watches, record("a", 1), ours, notHelm)
	w, err := NewRecordWatcher(RecordWatcherOptions{Metadata: client, Namespace: "ops", Events: make(chan Event), Labels: []string{ownerLabel}})
	if err != nil {
		t.Fatal(err)
	}

	early, cancelEarly := context.WithCancel(t.Context())
	cancelEarly()
	if _, err := w.RecordLabels(early); !errors.Is(err, context.Canceled) {
		t.Errorf("RecordLabels before Run = %v, want it to wait for the sync until ctx ends", err)
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
	got, err := w.RecordLabels(ctx)
	if err != nil {
		t.Fatalf("RecordLabels: %v", err)
	}
	slices.SortFunc(got, func(a, b map[string]string) int { return strings.Compare(a["version"], b["version"]) })
	want := []map[string]string{
		{"name": "a", "version": "1", "status": "deployed", ownerLabel: ""},
		{"name": "a", "version": "2", "status": "deployed", ownerLabel: "addon-operator"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record labels (-want +got):\n%s", diff)
	}

	// A record written later is in the next answer.
	select {
	case <-watches:
	case <-ctx.Done():
		t.Fatal("the records are never watched")
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if err := client.Tracker().Create(secrets, record("b", 1), "ops"); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := w.RecordLabels(ctx)
		return slices.ContainsFunc(got, func(l map[string]string) bool { return l["name"] == "b" }), err
	})
	if err != nil {
		t.Fatalf("a new record never shows in RecordLabels: %v", err)
	}
}
