package main

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// eventStream is the Events of one namespace that a module's events verb
// shows: those the field selector selects and keep keeps (nil keeps all).
type eventStream struct {
	client        kubernetes.Interface
	namespace     string
	fieldSelector string
	keep          func(*corev1.Event) bool
	// what names the stream in errors: "module m" or "module m's objects".
	what string
}

// list returns the stream's Events and the resource version to follow
// them from.
func (s eventStream) list(ctx context.Context) ([]corev1.Event, string, error) {
	list, err := s.client.CoreV1().Events(s.namespace).List(ctx, metav1.ListOptions{FieldSelector: s.fieldSelector})
	if err != nil {
		return nil, "", fmt.Errorf("list the Events of %s in %s: %w", s.what, s.namespace, err)
	}
	out := make([]corev1.Event, 0, len(list.Items))
	for i := range list.Items {
		if s.keep == nil || s.keep(&list.Items[i]) {
			out = append(out, list.Items[i])
		}
	}
	return out, list.ResourceVersion, nil
}

// seenEvents remembers the version of each Event a stream has sent, so
// that a relist sends only what is new or changed.
type seenEvents map[string]string

// add records ev and reports whether it is new to the stream.
func (s seenEvents) add(ev *corev1.Event) bool {
	if s[string(ev.UID)] == ev.ResourceVersion {
		return false
	}
	s[string(ev.UID)] = ev.ResourceVersion
	return true
}

// follow sends the stream's Events created or changed after resource
// version rv to send, as kubectl get events --watch shows them, until ctx
// ends (then it returns nil). It watches from the last version it saw,
// again each time the API server closes the watch; when that version is
// gone (410 Gone) it lists again and sends what it had not seen. seen
// holds the Events already sent, by the list too.
func (s eventStream) follow(ctx context.Context, rv string, seen seenEvents, send func(corev1.Event) error) error {
	for {
		next, err := s.watchOnce(ctx, rv, seen, send)
		select {
		case <-ctx.Done():
			return nil // interrupted, as the caller asked
		default:
		}
		switch {
		case apierrors.IsGone(err) || apierrors.IsResourceExpired(err):
			items, listRV, err := s.list(ctx)
			if err != nil {
				return err
			}
			for i := range items {
				if seen.add(&items[i]) {
					if err := send(items[i]); err != nil {
						return err
					}
				}
			}
			rv = listRV
		case err != nil:
			return err
		default:
			rv = next
		}
	}
}

// watchOnce watches from rv until the watch ends and returns the last
// resource version seen; an error event of the watch is returned as the
// API error it carries.
func (s eventStream) watchOnce(ctx context.Context, rv string, seen seenEvents, send func(corev1.Event) error) (string, error) {
	w, err := s.client.CoreV1().Events(s.namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: s.fieldSelector, ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err != nil {
		return rv, fmt.Errorf("watch the Events of %s in %s: %w", s.what, s.namespace, err)
	}
	defer w.Stop()
	for {
		var (
			we watch.Event
			ok bool
		)
		select {
		case <-ctx.Done():
			return rv, nil
		case we, ok = <-w.ResultChan():
		}
		if !ok {
			return rv, nil
		}
		if we.Type == watch.Error {
			return rv, fmt.Errorf("watch the Events of %s in %s: %w", s.what, s.namespace, apierrors.FromObject(we.Object))
		}
		if m, err := meta.Accessor(we.Object); err == nil && m.GetResourceVersion() != "" {
			rv = m.GetResourceVersion()
		}
		ev, isEvent := we.Object.(*corev1.Event)
		if !isEvent || (we.Type != watch.Added && we.Type != watch.Modified) {
			continue // bookmarks and deletions only move rv on
		}
		if (s.keep == nil || s.keep(ev)) && seen.add(ev) {
			if err := send(*ev); err != nil {
				return rv, err
			}
		}
	}
}

// listed is one stream's Events as listed, with where to follow them from.
type listed struct {
	stream eventStream
	rv     string
	seen   seenEvents
}

// listStreams lists every stream and returns their Events oldest first.
// A stream whose list fails is reported to warn and left out, but the
// first one's failure (the Module's own Events) is returned.
func listStreams(ctx context.Context, streams []eventStream, warn func(error)) ([]moduleEvent, []listed, error) {
	var (
		out   []moduleEvent
		state []listed
	)
	for i, s := range streams {
		items, rv, err := s.list(ctx)
		if err != nil && i == 0 {
			return nil, nil, err
		}
		if err != nil {
			warn(err)
			continue
		}
		seen := seenEvents{}
		for j := range items {
			seen.add(&items[j])
			out = append(out, eventOf(&items[j]))
		}
		state = append(state, listed{stream: s, rv: rv, seen: seen})
	}
	slices.SortStableFunc(out, func(a, b moduleEvent) int { return a.Time.Compare(b.Time) })
	return out, state, nil
}

// followStreams follows every listed stream at once and hands each new or
// changed Event to emit, one at a time, until ctx ends or a stream
// fails.
func followStreams(ctx context.Context, state []listed, emit func(moduleEvent) error) error {
	events := make(chan corev1.Event)
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range state {
		g.Go(func() error {
			return l.stream.follow(gctx, l.rv, l.seen, func(ev corev1.Event) error {
				select {
				case events <- ev:
					return nil
				case <-gctx.Done():
					return gctx.Err()
				}
			})
		})
	}
	g.Go(func() error {
		for {
			select {
			case ev := <-events:
				if err := emit(eventOf(&ev)); err != nil {
					return err
				}
			case <-gctx.Done():
				return nil
			}
		}
	})
	return g.Wait()
}
