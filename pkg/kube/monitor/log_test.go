package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// syncedRegistration is a handler registration whose informer has synced.
type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool                     { return true }
func (syncedRegistration) HasSyncedChecker() cache.DoneChecker { return nil }

// lockedBuffer is a log sink written by the monitors' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A failed watch is logged once, naming the binding by its name and the
// monitor by its id, each a single time.
func TestWatchFailedNamesTheBindingOnce(t *testing.T) {
	logs := &lockedBuffer{}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{testGVR: "ConfigMapList"})
	m, err := NewMonitors(Options{
		Dynamic: dyn, Kinds: kube.NewDiscovery(testDiscovery(), 0, nil).Resolver(), Events: make(chan Event, 16),
		Log: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	if _, err := m.Start(t.Context(), "echo/hooks/watch/kubernetes/0", testBinding()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	m.mu.Lock()
	mon := m.monitors["echo/hooks/watch/kubernetes/0"]
	m.mu.Unlock()
	mon.watchFailed(syncedRegistration{}, nil, errors.New("connection refused"))

	var line string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, `"watch failed"`) {
			line = l
		}
	}
	if strings.Count(line, `"binding"`) != 1 {
		t.Fatalf("watch failed line %q: want the binding key exactly once", line)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"binding": rec["binding"], "monitor": rec["monitor"], "kind": rec["kind"], "error": rec["error"]}
	want := map[string]any{"binding": "cms", "monitor": "echo/hooks/watch/kubernetes/0", "kind": "ConfigMap", "error": "connection refused"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch failed record (-want +got):\n%s", diff)
	}
}
