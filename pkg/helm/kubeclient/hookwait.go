package kubeclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/resource"
)

// hookReadTimeout bounds the read of a hook Job that an error describes.
const hookReadTimeout = 10 * time.Second

// HookError is a chart's Helm hook that did not complete: a hook Job that
// failed, or was not complete when its time (Release.HookTimeout, or the
// operation's) ran out. pkg/helm's Apply and uninstall errors wrap it; it
// wraps Helm's own error.
type HookError struct {
	// Event is the hook's event for the operation ("pre-install",
	// "post-upgrade"...), "" when unknown.
	Event string
	// Kind, Namespace and Name name the hook's object (Job or Pod).
	Kind, Namespace, Name string
	// After is how long it was waited for.
	After time.Duration
	// Failed reports that the Job failed, rather than ran out of time.
	Failed bool
	// Condition is the Job's last condition, "<type>: <reason>: <message>",
	// or its counts of Pods when it has none.
	Condition string
	// Err is Helm's error.
	Err error
}

func (e *HookError) Error() string {
	event := e.Event
	if event == "" {
		event = "chart"
	}
	state := fmt.Sprintf("not complete after %s", e.After.Round(time.Second))
	if e.Failed {
		state = "failed"
	}
	msg := fmt.Sprintf("%s hook %s %s/%s %s", event, e.Kind, e.Namespace, e.Name, state)
	if e.Condition != "" {
		msg += ": " + e.Condition
	}
	return msg
}

func (e *HookError) Unwrap() error { return e.Err }

// HookWaits follows the chart hooks Helm waits for during one operation,
// so that a failure, or an operation cut short while Helm still waits,
// names the hook. Helm's own error names none (a timeout says "context
// deadline exceeded", and its hook messages lose the cause's type).
type HookWaits struct {
	mu      sync.Mutex
	op      string // "install", "upgrade", "delete": picks the hook's event
	waiting kube.ResourceList
	since   time.Time
	timeout time.Duration
	failed  *HookError
}

// SetOperation names the Helm operation whose hooks follow: "install",
// "upgrade" or "delete".
func (w *HookWaits) SetOperation(op string) {
	w.mu.Lock()
	w.op, w.failed = op, nil
	w.mu.Unlock()
}

func (w *HookWaits) begin(resources kube.ResourceList, timeout time.Duration) time.Time {
	now := time.Now()
	w.mu.Lock()
	w.waiting, w.since, w.timeout = resources, now, timeout
	w.mu.Unlock()
	return now
}

func (w *HookWaits) end(failed *HookError) {
	w.mu.Lock()
	w.waiting = nil
	if failed != nil {
		w.failed = failed
	}
	w.mu.Unlock()
}

// Explain returns the hook that made operation error err fail: the one
// that failed, or the one Helm still waits for when err is the deadline of
// the operation's context ctx, which may have ended. It returns nil when
// no hook is to blame.
func (w *HookWaits) Explain(ctx context.Context, err error) *HookError {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	failed, waiting, since, op := w.failed, w.waiting, w.since, w.op
	w.mu.Unlock()
	if failed != nil {
		return failed
	}
	// Only a timeout is the hook's doing; a cancelled operation (the
	// operator stopping) says so as it is.
	if len(waiting) == 0 || !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	for _, info := range waiting {
		if he := describeHook(context.WithoutCancel(ctx), op, info, time.Since(since), err); he != nil {
			return he
		}
	}
	return nil
}

// WatchUntilReady is Helm's wait for a chart hook's objects, noted in
// hooks so that an error names the hook Job that failed or did not
// complete in time.
func (c Client) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	if c.hooks == nil {
		return c.Client.WatchUntilReady(resources, timeout) //nolint:wrapcheck // Helm's own error, as Helm returns it
	}
	start := c.hooks.begin(resources, timeout)
	err := c.Client.WatchUntilReady(resources, timeout)
	if err == nil {
		c.hooks.end(nil)
		return nil
	}
	c.hooks.mu.Lock()
	op := c.hooks.op
	c.hooks.mu.Unlock()
	var failed *HookError
	for _, info := range resources {
		if he := describeHook(context.Background(), op, info, time.Since(start), err); he != nil {
			failed = he
			break
		}
	}
	c.hooks.end(failed)
	return err //nolint:wrapcheck // Helm's own error, as Helm returns it; the hook is reported by Explain
}

// describeHook reads a hook Job (or Pod) that is not complete and says
// why; nil for any other object, or one that completed.
func describeHook(ctx context.Context, op string, info *resource.Info, after time.Duration, err error) *HookError {
	kind := info.Mapping.GroupVersionKind.Kind
	if kind != "Job" && kind != "Pod" {
		return nil
	}
	he := &HookError{Event: hookEvent(op, info.Object), Kind: kind, Namespace: info.Namespace, Name: info.Name, After: after, Err: err}
	if kind != "Job" {
		return he
	}
	ctx, cancel := context.WithTimeout(ctx, hookReadTimeout)
	defer cancel()
	raw, getErr := info.Client.Get().NamespaceIfScoped(info.Namespace, info.Namespaced()).
		Resource(info.Mapping.Resource.Resource).Name(info.Name).Do(ctx).Raw()
	var job batchv1.Job
	if getErr == nil {
		getErr = json.Unmarshal(raw, &job)
	}
	if getErr != nil {
		he.Condition = "cannot read the Job: " + getErr.Error()
		return he
	}
	if jobComplete(&job) {
		return nil
	}
	he.Failed, he.Condition = jobState(&job)
	return he
}

func jobComplete(job *batchv1.Job) bool {
	return slices.ContainsFunc(job.Status.Conditions, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobComplete && c.Status == "True"
	})
}

// jobState reports whether job failed and describes its last condition,
// or its Pods when it has no condition.
func jobState(job *batchv1.Job) (bool, string) {
	conds := job.Status.Conditions
	if len(conds) == 0 {
		return false, fmt.Sprintf("no condition yet (Pods active %d, succeeded %d, failed %d)",
			job.Status.Active, job.Status.Succeeded, job.Status.Failed)
	}
	last := conds[0]
	for _, c := range conds[1:] {
		if !c.LastTransitionTime.Before(&last.LastTransitionTime) {
			last = c
		}
	}
	failed := slices.ContainsFunc(conds, func(c batchv1.JobCondition) bool {
		return c.Type == batchv1.JobFailed && c.Status == "True"
	})
	parts := []string{string(last.Type) + "=" + string(last.Status)}
	for _, s := range []string{last.Reason, last.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return failed, strings.Join(parts, ": ")
}

// hookEvent picks, from obj's helm.sh/hook annotation, the event of
// operation op ("pre-install" for "install"); the first event when none
// matches.
func hookEvent(op string, obj any) string {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	var events []string
	for _, e := range strings.Split(accessor.GetAnnotations()[release.HookAnnotation], ",") {
		if e = strings.TrimSpace(e); e != "" {
			events = append(events, e)
		}
	}
	for _, e := range events {
		if op != "" && strings.HasSuffix(e, "-"+op) {
			return e
		}
	}
	if len(events) > 0 {
		return events[0]
	}
	return ""
}
