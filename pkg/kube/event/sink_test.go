package event

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

var errRefused = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")

type eventCounts struct {
	mu      sync.Mutex
	pending int
	dropped int
}

func (c *eventCounts) EventsPending(n int) { c.mu.Lock(); c.pending = n; c.mu.Unlock() }
func (c *eventCounts) EventsDropped(n int) { c.mu.Lock(); c.dropped += n; c.mu.Unlock() }

func (c *eventCounts) get() (pending, dropped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending, c.dropped
}

// TestEventRecorderHoldsEventsDuringOutage records Events while the API
// server refuses connections and expects each of them, in order, once it
// answers again.
func TestEventRecorderHoldsEventsDuringOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset()
		var down atomic.Bool
		down.Store(true)
		client.PrependReactor("create", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
			if down.Load() {
				return true, nil, errRefused
			}
			return false, nil, nil
		})
		counts := &eventCounts{}
		r := NewRecorder(client, "ns", "addon-operator").WithMetrics(counts)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait() // the broadcaster watches: Events are not dropped

		// Three reasons: client-go folds Events of one reason about one
		// object into a series. Each at its own time: an Event's name is
		// its time, and the broadcaster sends each from its own goroutine.
		for _, record := range []func(){
			func() { r.ModuleFailed("ant", fmt.Errorf("list pods: %w", errRefused)) },
			func() { r.ObjectDrifted("bee", "ConfigMap/x", []string{"data"}, false) },
			func() { r.ModuleRecovered("cat", 2) },
		} {
			record()
			synctest.Wait()
			<-time.After(time.Millisecond)
		}
		synctest.Wait()
		if got := notes(t, client); len(got) != 0 {
			t.Fatalf("events stored while the server is down: %v", got)
		}
		if pending, _ := counts.get(); pending != 3 {
			t.Errorf("pending = %d, want 3", pending)
		}
		// Still down at the periodic retry: still held, nothing lost.
		<-time.After(heldEventsRetry + time.Second)
		synctest.Wait()
		if pending, dropped := counts.get(); pending != 3 || dropped != 0 {
			t.Errorf("after a failed retry: pending %d, dropped %d; want 3, 0", pending, dropped)
		}

		down.Store(false)
		r.Resume()
		synctest.Wait()
		want := []string{
			"module ant: list pods: " + errRefused.Error(),
			"module bee: ConfigMap/x drifted in data (reported)",
			"module cat recovered after 2 failed runs",
		}
		if diff := cmp.Diff(want, notes(t, client)); diff != "" {
			t.Errorf("events after the outage (-want +got):\n%s", diff)
		}
		if pending, _ := counts.get(); pending != 0 {
			t.Errorf("pending after the flush = %d, want 0", pending)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

// notes returns the stored events' notes in creation order.
func notes(t *testing.T, client *fake.Clientset) []string {
	t.Helper()
	var out []string
	for _, a := range client.Actions() {
		c, ok := a.(k8stesting.CreateAction)
		if !ok || a.GetResource().Resource != "events" {
			continue
		}
		ev := c.GetObject().(*eventsv1.Event)
		if _, err := client.EventsV1().Events(ev.Namespace).Get(t.Context(), ev.Name, metav1.GetOptions{}); err == nil && !slices.Contains(out, ev.Note) {
			out = append(out, ev.Note)
		}
	}
	return out
}

// fakeSink records what reaches the API server, failing with err while set.
type fakeSink struct {
	err     error
	created []string
}

func (f *fakeSink) Create(_ context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.created = append(f.created, ev.Name)
	return ev, nil
}

func (f *fakeSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return f.Create(ctx, ev)
}

func (f *fakeSink) Patch(_ context.Context, ev *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	if f.err != nil {
		return nil, f.err
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "events"}, ev.Name)
}

func event(name string) *eventsv1.Event {
	return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestHeldSinkDropsOldestBeyondBound(t *testing.T) {
	next := &fakeSink{err: apierrors.NewServiceUnavailable("etcd is down")}
	counts := &eventCounts{}
	s := newHeldSink(next)
	s.metrics = counts
	for i := range heldEventsMax + 5 {
		if _, err := s.Create(t.Context(), event(fmt.Sprintf("e%03d", i))); err != nil {
			t.Fatalf("create while the server is down = %v, want it held", err)
		}
	}
	// A later count of a held series replaces it rather than taking a slot.
	if _, err := s.Patch(t.Context(), event("e010"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if pending, dropped := counts.get(); pending != heldEventsMax || dropped != 5 {
		t.Errorf("pending %d, dropped %d; want %d, 5", pending, dropped, heldEventsMax)
	}
	if n := s.flush(t.Context()); n != heldEventsMax {
		t.Errorf("flush while still down left %d, want %d", n, heldEventsMax)
	}
	next.err = nil
	if n := s.flush(t.Context()); n != 0 {
		t.Errorf("flush after the outage left %d, want 0", n)
	}
	if len(next.created) != heldEventsMax || next.created[0] != "e005" || next.created[len(next.created)-1] != "e010" {
		t.Errorf("sent %d events from %v to %v; want %d from e005, the replaced e010 last",
			len(next.created), next.created[0], next.created[len(next.created)-1], heldEventsMax)
	}
}

func TestHeldSinkPassesOtherErrorsOn(t *testing.T) {
	invalid := apierrors.NewBadRequest("note too long")
	s := newHeldSink(&fakeSink{err: invalid})
	if _, err := s.Create(t.Context(), event("a")); !errors.Is(err, invalid) {
		t.Errorf("create = %v, want the server's rejection", err)
	}
	if n := s.pending(); n != 0 {
		t.Errorf("held %d rejected events, want 0", n)
	}
}

func TestServerUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"transport", errRefused, true},
		{"wrapped transport", fmt.Errorf("post: %w", errRefused), true},
		{"503", apierrors.NewServiceUnavailable("x"), true},
		{"500 etcd", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"504", apierrors.NewTimeoutError("x", 1), true},
		{"429", apierrors.NewTooManyRequests("x", 1), true},
		{"400", apierrors.NewBadRequest("x"), false},
		{"409", apierrors.NewAlreadyExists(schema.GroupResource{Resource: "events"}, "x"), false},
		{"construction", &rest.RequestConstructionError{Err: errors.New("bad")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverUnavailable(tt.err); got != tt.want {
				t.Errorf("serverUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
