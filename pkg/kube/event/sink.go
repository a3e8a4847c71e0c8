package event

import (
	"context"
	"errors"
	"sync"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
)

// heldEventsMax bounds the Events held during an outage; past it, the
// oldest are dropped and counted.
const heldEventsMax = 256

// eventMetrics receive the held-Events buffer's size and losses;
// *metrics.Recorder is the real one.
type eventMetrics interface {
	EventsPending(n int)
	EventsDropped(n int)
}

// heldEvent is an Event the API server could not take: created, or when
// patch is set, patched as the next of a series.
type heldEvent struct {
	event *eventsv1.Event
	patch []byte
}

// heldSink is the broadcaster's sink. client-go's own gives up on an Event
// after 12 tries over about two minutes, and at once when the server
// answers 5xx, as it does while etcd is down; this one holds such Events,
// in order and up to heldEventsMax, tells the broadcaster they were
// written, and sends them on flush. Its methods are safe for concurrent
// use.
type heldSink struct {
	next    events.EventSink
	metrics eventMetrics  // may be nil
	held    chan struct{} // signalled when an Event is held

	mu     sync.Mutex
	queue  []heldEvent
	sendMu sync.Mutex // one flush at a time, so held Events keep their order
}

func newHeldSink(next events.EventSink) *heldSink {
	return &heldSink{next: next, held: make(chan struct{}, 1)}
}

// Create sends ev, or holds it when Events are already held (to keep
// their order) or the server cannot take it now.
func (s *heldSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return s.send(ctx, heldEvent{event: ev}, func() (*eventsv1.Event, error) { return s.next.Create(ctx, ev) })
}

// Update sends or holds ev as Create does; it is sent as a create later.
func (s *heldSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return s.send(ctx, heldEvent{event: ev}, func() (*eventsv1.Event, error) { return s.next.Update(ctx, ev) })
}

// Patch sends or holds the next count of a series as Create does.
func (s *heldSink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.send(ctx, heldEvent{event: ev, patch: data}, func() (*eventsv1.Event, error) { return s.next.Patch(ctx, ev, data) })
}

func (s *heldSink) send(ctx context.Context, he heldEvent, call func() (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	if s.pending() > 0 {
		s.hold(he)
		return he.event, nil
	}
	out, err := call()
	if ctx.Err() == nil && serverUnavailable(err) {
		s.hold(he)
		return he.event, nil
	}
	return out, err
}

// serverUnavailable tells whether err says the API server could not take
// a request now (no answer, 5xx, 429), rather than that the request is bad.
func serverUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var construction *rest.RequestConstructionError
	if errors.As(err, &construction) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // a transport error
	}
	code := status.Status().Code
	return code >= 500 || code == 429
}

func (s *heldSink) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// hold appends he, replacing an older held version of the same Event (a
// series' later count), and drops the oldest beyond heldEventsMax.
func (s *heldSink) hold(he heldEvent) {
	s.mu.Lock()
	for i, old := range s.queue {
		if old.event.Namespace == he.event.Namespace && old.event.Name == he.event.Name {
			if old.patch == nil {
				he.patch = nil // never created: create the latest version
			}
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	s.queue = append(s.queue, he)
	dropped := max(len(s.queue)-heldEventsMax, 0)
	s.queue = s.queue[dropped:]
	n := len(s.queue)
	s.mu.Unlock()
	if s.metrics != nil {
		s.metrics.EventsPending(n)
		if dropped > 0 {
			s.metrics.EventsDropped(dropped)
		}
	}
	select {
	case s.held <- struct{}{}:
	default:
	}
}

// flush sends the held Events in order until the server fails to take
// one again; an Event the server rejects for itself is dropped, as
// client-go drops it. It reports how many are still held.
func (s *heldSink) flush(ctx context.Context) int {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	for ctx.Err() == nil {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			break
		}
		he := s.queue[0]
		s.mu.Unlock()
		if serverUnavailable(s.sendHeld(ctx, he)) {
			break
		}
		s.mu.Lock()
		// hold may have replaced it meanwhile: remove it only if still first.
		if len(s.queue) > 0 && s.queue[0].event == he.event {
			s.queue = s.queue[1:]
		}
		s.mu.Unlock()
	}
	n := s.pending()
	if s.metrics != nil {
		s.metrics.EventsPending(n)
	}
	return n
}

// sendHeld writes one held Event: a series patch, falling back to a create
// when the Event is gone, or a create, where one already there is success.
func (s *heldSink) sendHeld(ctx context.Context, he heldEvent) error {
	if he.patch != nil {
		_, err := s.next.Patch(ctx, he.event, he.patch)
		if !apierrors.IsNotFound(err) {
			return err
		}
	}
	ev := he.event.DeepCopy()
	ev.ResourceVersion = ""
	_, err := s.next.Create(ctx, ev)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
