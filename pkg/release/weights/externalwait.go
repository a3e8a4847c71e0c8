package weights

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// ExternalState is what a look at an external dependency found.
type ExternalState struct {
	Dependency External
	// Kind is the kind the dependency's type resolved to, and Namespace
	// where it was looked for ("" for a cluster-scoped kind).
	Kind      string
	Namespace string
	// Exists tells whether the object was found; Ready whether kstatus
	// computes it Current.
	Exists, Ready bool
	// Message is kstatus's message for an object found.
	Message string
}

// Object names the dependency as it was looked for: "Secret apps/config",
// "ClusterIssuer ca".
func (s ExternalState) Object() string {
	if s.Namespace == "" {
		return s.Kind + " " + s.Dependency.Name
	}
	return s.Kind + " " + s.Namespace + "/" + s.Dependency.Name
}

// Seen says what was found: "absent", or kstatus's status and message.
func (s ExternalState) Seen() string {
	if !s.Exists {
		return "absent"
	}
	if s.Message == "" {
		return "present, not ready"
	}
	return s.Message
}

// ExternalError is an external dependency that cannot be awaited: its
// type resolves to no kind the API server serves, or the operator may
// not read it. The module fails at once rather than wait for its timeout.
type ExternalError struct {
	Dependency External
	Err        error
}

func (e *ExternalError) Error() string {
	d := e.Dependency
	return fmt.Sprintf("external dependency %s (annotation %s of %s): %v", d.Target(), d.Annotation, d.Object, e.Err)
}

func (e *ExternalError) Unwrap() error { return e.Err }

// ExternalTimeoutError is an external dependency still absent or not
// ready when its wait's timeout passed.
type ExternalTimeoutError struct {
	Last    ExternalState
	Timeout time.Duration
}

func (e *ExternalTimeoutError) Error() string {
	d := e.Last.Dependency
	return fmt.Sprintf("external dependency %s (annotation %s of %s) not ready after %s: %s",
		e.Last.Object(), d.Annotation, d.Object, e.Timeout, e.Last.Seen())
}

// externalPoll bounds the delay between two looks at a dependency: a
// change of it, heard through a watch of its name, ends the delay sooner.
const (
	externalFirstPoll = 200 * time.Millisecond
	externalMaxPoll   = 5 * time.Second
)

// CheckExternal looks once at dependency d, with the operator's rights. A
// type that resolves to no kind, or an object the operator may not read,
// is an *ExternalError; other errors reading it (the API server busy or
// unreachable) are returned as they are, for the caller to retry.
func (c *Creator) CheckExternal(ctx context.Context, d External) (ExternalState, error) {
	res, err := c.resolveExternal(ctx, d.Type)
	if err != nil {
		return ExternalState{Dependency: d}, &ExternalError{Dependency: d, Err: fmt.Errorf("resource type %q: %w", d.Type, err)}
	}
	st, _, err := c.readExternal(ctx, d, res)
	return st, err
}

func (c *Creator) readExternal(ctx context.Context, d External, res kube.Resource) (ExternalState, dynamic.ResourceInterface, error) {
	st := ExternalState{Dependency: d, Kind: res.Kind}
	var ri dynamic.ResourceInterface = c.dyn.Resource(res.GVR)
	if res.Namespaced {
		st.Namespace = d.Namespace
		ri = c.dyn.Resource(res.GVR).Namespace(d.Namespace)
	}
	u, err := ri.Get(ctx, d.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return st, ri, nil
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsMethodNotSupported(err):
		return st, ri, &ExternalError{Dependency: d, Err: fmt.Errorf("read %s: %w", st.Object(), err)}
	case err != nil:
		return st, ri, fmt.Errorf("read %s: %w", st.Object(), err)
	}
	st.Exists = true
	st.Ready, st.Message = kstatus(u)
	return st, ri, nil
}

// kstatus computes whether u is ready (Current), and kstatus's status and
// message, such as "InProgress: Available: 0/1". Only these leave the
// process, never the object's content.
func kstatus(u *unstructured.Unstructured) (ready bool, message string) {
	r, err := status.Compute(u)
	if err != nil {
		return false, "status not computed: " + err.Error()
	}
	message = r.Status.String()
	if r.Message != "" {
		message += ": " + r.Message
	}
	return r.Status == status.CurrentStatus, message
}

// resolveExternal finds the resource a dependency's type names, as
// kubectl does: <resource>.<version>.<group> when it has two dots or
// more and that resolves, else <resource>[.<group>] in the group's
// preferred version; the resource may be plural, singular, short or the
// kind.
func (c *Creator) resolveExternal(ctx context.Context, typ string) (kube.Resource, error) {
	full, gr := schema.ParseResourceArg(typ)
	if full != nil {
		res, err := c.kinds.Resolve(ctx, full.GroupVersion().WithKind(full.Resource))
		if err == nil || !meta.IsNoMatchError(err) {
			return res, err
		}
	}
	return c.kinds.Resolve(ctx, schema.GroupVersionKind{Group: gr.Group, Kind: gr.Resource})
}

// AwaitExternal waits until every one of deps exists and is ready, for
// timeout in all, looking at each with the operator's rights: again at
// once when a watch of its name hears a change, else after a delay that
// grows from 200 ms to 5 s. seen, when not nil, hears each look that
// found a dependency not ready. It fails with an *ExternalError as soon
// as a dependency cannot be resolved or read (see CheckExternal), with an
// *ExternalTimeoutError naming the dependency and what was last seen of it
// once timeout passed, and with ctx's error when ctx ends.
func (c *Creator) AwaitExternal(ctx context.Context, deps []External, timeout time.Duration, seen func(ExternalState)) error {
	deadline := c.clock.Now().Add(timeout)
	for _, d := range deps {
		if err := c.awaitOne(ctx, d, deadline, timeout, seen); err != nil {
			return err
		}
	}
	return nil
}

func (c *Creator) awaitOne(ctx context.Context, d External, deadline time.Time, timeout time.Duration, seen func(ExternalState)) error {
	res, err := c.resolveExternal(ctx, d.Type)
	if err != nil {
		return &ExternalError{Dependency: d, Err: fmt.Errorf("resource type %q: %w", d.Type, err)}
	}
	var changes watch.Interface
	defer func() {
		if changes != nil {
			changes.Stop()
		}
	}()
	delay := externalFirstPoll
	for {
		st, ri, err := c.readExternal(ctx, d, res)
		var permanent *ExternalError
		switch {
		case errors.As(err, &permanent):
			return err
		case err == nil && st.Ready:
			return nil
		case err == nil && seen != nil:
			seen(st)
		}
		if !c.clock.Now().Before(deadline) {
			if err != nil {
				return fmt.Errorf("external dependency %s (annotation %s of %s) not ready after %s: %w", st.Object(), d.Annotation, d.Object, timeout, err)
			}
			return &ExternalTimeoutError{Last: st, Timeout: timeout}
		}
		if changes == nil {
			// A watch that cannot start (not allowed, the server busy)
			// leaves the poll; the next look tries again.
			changes, _ = ri.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", d.Name).String()})
		}
		var heard bool
		changes, heard, err = c.pause(ctx, changes, min(delay, deadline.Sub(c.clock.Now())))
		if err != nil {
			return err
		}
		if heard {
			delay = externalFirstPoll // what changed may go on changing
			continue
		}
		delay = min(delay*2, externalMaxPoll)
	}
}

// pause waits for delay, or less when changes hears the dependency
// change (heard). A watch that ends is stopped and the pause goes on
// without it; pause returns the watch still open, nil when there is none,
// for the next look to start again.
func (c *Creator) pause(ctx context.Context, changes watch.Interface, delay time.Duration) (open watch.Interface, heard bool, err error) {
	var events <-chan watch.Event
	if changes != nil {
		events = changes.ResultChan()
	}
	t := c.clock.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return changes, false, ctx.Err()
		case _, ok := <-events:
			if ok {
				return changes, true, nil
			}
			changes.Stop()
			changes, events = nil, nil
		case <-t.C():
			return changes, false, nil
		}
	}
}
