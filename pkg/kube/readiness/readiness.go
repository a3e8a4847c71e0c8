// Package readiness tells whether a release's objects are ready, the way
// kstatus computes it (Deployments available, Jobs complete, CRDs
// established...), and waits until they are.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Object names one object of a release, as its manifest does: Namespace
// is empty for cluster-scoped objects and for namespaced ones that take
// the release's namespace.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// ReadyAsCreated tells that the operation whose result is awaited has
	// just created the object, and that it is ready from then on (see
	// ObjectsFromManifest): Check does not read it.
	ReadyAsCreated bool
}

// String names the object for messages: "Deployment ns/name".
func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Pending is an object that is not ready, and why.
type Pending struct {
	Object Object
	Status status.Status
	// Message is kstatus's, such as "Available: 1/3".
	Message string
}

// String says what is awaited: "Deployment ns/x: Available: 1/3".
func (p Pending) String() string {
	msg := p.Message
	if msg == "" {
		msg = p.Status.String()
	}
	return p.Object.String() + ": " + msg
}

// NotReadyError is a wait that ended with an object not ready: its
// timeout passed, or kstatus says the object failed.
type NotReadyError struct {
	Pending Pending
	// Timeout is the wait's bound; zero when the object failed.
	Timeout time.Duration
}

func (e *NotReadyError) Error() string {
	if e.Timeout == 0 {
		return fmt.Sprintf("%s failed: %s", e.Pending.Object, e.Pending.Message)
	}
	return fmt.Sprintf("not ready after %s: %s", e.Timeout, e.Pending)
}

// Checker reads objects and computes their status. It keeps no state; it
// is safe for concurrent use.
type Checker struct {
	dyn   dynamic.Interface
	kinds *kube.Resolver
	clock clock.Clock
	// first and max bound the delay between two looks while waiting;
	// maxWatched replaces max when changes of the objects are heard.
	first, max, maxWatched time.Duration
}

// NewChecker returns a Checker reading objects through dyn.
func NewChecker(dyn dynamic.Interface, kinds *kube.Resolver, clk clock.Clock) *Checker {
	return &Checker{dyn: dyn, kinds: kinds, clock: clk, first: 100 * time.Millisecond, max: 2 * time.Second, maxWatched: 10 * time.Second}
}

// Check returns the first object of objects that is not ready, nil when
// all are. namespace is the release's, for namespaced objects without
// one. An object kstatus reports Failed comes back as a *NotReadyError.
func (c *Checker) Check(ctx context.Context, namespace string, objects []Object) (*Pending, error) {
	for _, obj := range objects {
		p, err := c.check(ctx, namespace, obj)
		if err != nil || p != nil {
			return p, err
		}
	}
	return nil, nil
}

func (c *Checker) check(ctx context.Context, namespace string, obj Object) (*Pending, error) {
	gv, err := schema.ParseGroupVersion(obj.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s: apiVersion: %w", obj, err)
	}
	if obj.ReadyAsCreated || alwaysReady(gv.WithKind(obj.Kind).GroupKind()) {
		return nil, nil
	}
	res, err := c.kinds.Resolve(ctx, gv.WithKind(obj.Kind))
	if err != nil {
		return nil, fmt.Errorf("%s: resolve kind: %w", obj, err)
	}
	get := c.dyn.Resource(res.GVR)
	var ri dynamic.ResourceInterface = get
	if res.Namespaced {
		if obj.Namespace == "" {
			obj.Namespace = namespace
		}
		ri = get.Namespace(obj.Namespace)
	}
	u, err := ri.Get(ctx, obj.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &Pending{Object: obj, Status: status.NotFoundStatus, Message: "not found"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", obj, err)
	}
	r, err := status.Compute(u)
	if err != nil {
		return nil, fmt.Errorf("%s: compute status: %w", obj, err)
	}
	switch r.Status {
	case status.CurrentStatus:
		return nil, nil
	case status.FailedStatus:
		return nil, &NotReadyError{Pending: Pending{Object: obj, Status: r.Status, Message: r.Message}}
	default:
		return &Pending{Object: obj, Status: r.Status, Message: r.Message}, nil
	}
}

// Wait looks at objects until all are ready, and returns nil then. It
// looks again at once when changed hears something (one of the objects
// changed), else after a growing delay: up to 2 s without changed, up to
// 10 s with it, since a change then ends the delay. progress, when not
// nil, hears which object is awaited each time that changes. It fails
// with a *NotReadyError once timeout passed or an object failed, and with
// ctx's error when ctx ends. Errors reading an object are retried until
// the timeout; the last one is returned then.
func (c *Checker) Wait(ctx context.Context, namespace string, objects []Object, timeout time.Duration, changed <-chan struct{}, progress func(Pending)) error {
	deadline := c.clock.Now().Add(timeout)
	delay, longest := c.first, c.max
	if changed != nil {
		longest = c.maxWatched
	}
	var last Pending
	for {
		p, err := c.Check(ctx, namespace, objects)
		var nr *NotReadyError
		switch {
		case errors.As(err, &nr):
			return err
		case err == nil && p == nil:
			return nil
		case err == nil && *p != last:
			last = *p
			if progress != nil {
				progress(last)
			}
		}
		if !c.clock.Now().Before(deadline) {
			if err != nil {
				return fmt.Errorf("not ready after %s: %w", timeout, err)
			}
			return &NotReadyError{Pending: last, Timeout: timeout}
		}
		t := c.clock.NewTimer(min(delay, deadline.Sub(c.clock.Now())))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-changed:
			t.Stop()
			delay = c.first // what changed may go on changing
			continue
		case <-t.C():
		}
		delay = min(delay*2, longest)
	}
}

// AnyToRead reports whether Check reads any of objects: false when every
// one is ready as created or ready whenever it exists.
func AnyToRead(objects []Object) bool {
	for _, obj := range objects {
		gv, err := schema.ParseGroupVersion(obj.APIVersion)
		if err != nil || !obj.ReadyAsCreated && !alwaysReady(gv.WithKind(obj.Kind).GroupKind()) {
			return true
		}
	}
	return false
}

// alwaysReady reports the kinds kstatus computes as ready whenever they
// exist (its alwaysReady rule): the release that was just applied has
// them, so they are not read again.
func alwaysReady(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Secret"}, schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		return true
	}
	return false
}
