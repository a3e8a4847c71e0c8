package executionhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// reconcile moves one hook forward, in this order, each step persisted
// before the next: the finalizer; the template copied into the status;
// the selected containers in the status; the requester's right to exec
// into their pods; the PreAction in each container that has not started
// it; the PreAction summary; once the hook is deleted or expired, the
// requester's right again and the PostAction in each container where the
// PreAction started; the PostAction summary; the finalizer removed from a
// deleted hook. It returns after how long to look again (the expiration)
// when nothing else will trigger it.
func (c *Controller) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	hook, err := c.get(ctx, ns, name)
	if err != nil || hook == nil {
		return 0, err
	}
	deleting := hook.DeletionTimestamp != nil
	if deleting && !hasFinalizer(hook) {
		return 0, nil
	}
	if !deleting && !hasFinalizer(hook) {
		hook.Finalizers = append(hook.Finalizers, hooksv1.Finalizer)
		if hook, err = c.update(ctx, hook); err != nil {
			return 0, err
		}
	}
	if hook, err = c.prepare(ctx, hook); err != nil || hook == nil {
		return 0, err
	}
	if hook.Status.PreActionSucceed == nil {
		if hook, err = c.runPre(ctx, hook); err != nil {
			return 0, err
		}
	}
	now := c.clock.Now()
	if postDue(hook, now) && hook.Status.PostActionSucceed == nil {
		if !deleting {
			c.event(hook, false, "Expired", "expired after %ds: running the PostAction", *effectiveSpec(hook).ExpirationSeconds)
		}
		if hook, err = c.runPost(ctx, hook); err != nil {
			return 0, err
		}
	}
	if deleting {
		hook.Finalizers = slices.DeleteFunc(hook.Finalizers, func(f string) bool { return f == hooksv1.Finalizer })
		_, err := c.update(ctx, hook)
		return 0, err
	}
	if exp := expiry(hook); hook.Status.PostActionSucceed == nil && !exp.IsZero() {
		return max(exp.Sub(now), time.Millisecond), nil
	}
	return 0, nil
}

// prepare copies the template into the status and selects the
// containers, once. It returns nil (and records why) when the hook cannot
// run; a missing template is an errWaiting, retried with backoff.
func (c *Controller) prepare(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	if hook.DeletionTimestamp != nil {
		return hook, nil // nothing new starts; the PostAction undoes what did
	}
	if hook.Spec.PreAction == nil && hook.Spec.ExecutionHookTemplateName != "" && hook.Status.Template == nil && hook.Status.PreActionSucceed == nil {
		tpl, err := c.template(ctx, hook.Namespace, hook.Spec.ExecutionHookTemplateName)
		if err != nil {
			return nil, err
		}
		if tpl == nil {
			return nil, c.templateMissing(ctx, hook)
		}
		hook.Status.Template = &tpl.ExecutionHookTemplateSpec // decoded afresh: not shared
		hook.Status.Message = ""
		msg := fmt.Sprintf("policy, actions and expiration copied from ExecutionHookTemplate %q", tpl.Name)
		c.setCondition(hook, hooksv1.ConditionTemplateFound, true, "TemplateCopied", msg)
		if hook, err = c.writeStatus(ctx, hook); err != nil {
			return nil, err
		}
		c.event(hook, false, "TemplateCopied", "%s", msg)
	}
	if len(hook.Status.ContainerExecutionHookStatuses) > 0 || hook.Status.PreActionSucceed != nil {
		return hook, nil
	}
	spec := effectiveSpec(hook)
	if spec.PreAction == nil {
		return c.fail(ctx, hook, "the hook has no preAction and no executionHookTemplateName")
	}
	pods, err := c.client.CoreV1().Pods(hook.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods of %s: %w", hook.Namespace, err)
	}
	entries, err := targets(spec, pods.Items)
	if err != nil {
		return c.fail(ctx, hook, err.Error())
	}
	hook.Status.ContainerExecutionHookStatuses = entries
	hook.Status.Containers = len(entries)
	return c.writeStatus(ctx, hook)
}

// errWaiting marks a reconcile that waits for something outside the hook
// (its template): retried with backoff and not logged as an error, since
// the hook's condition and an Event already say why.
var errWaiting = errors.New("waiting")

// templateMissing records, once per change, that the hook's template does
// not exist: the TemplateFound condition, the message and an Event.
func (c *Controller) templateMissing(ctx context.Context, hook *hooksv1.ExecutionHook) error {
	msg := fmt.Sprintf("ExecutionHookTemplate %q not found in namespace %s", hook.Spec.ExecutionHookTemplateName, hook.Namespace)
	if c.setCondition(hook, hooksv1.ConditionTemplateFound, false, "TemplateNotFound", msg) || hook.Status.Message != msg {
		hook.Status.Message = msg
		if _, err := c.writeStatus(ctx, hook); err != nil {
			return err
		}
		c.event(hook, true, "TemplateNotFound", "%s; looking again with backoff", msg)
	}
	return fmt.Errorf("%w: %s", errWaiting, msg)
}

// setCondition sets a condition of the hook's status; it reports whether
// anything changed.
func (c *Controller) setCondition(hook *hooksv1.ExecutionHook, typ string, status bool, reason, msg string) bool {
	st := metav1.ConditionFalse
	if status {
		st = metav1.ConditionTrue
	}
	return meta.SetStatusCondition(&hook.Status.Conditions, metav1.Condition{
		Type: typ, Status: st, Reason: reason, Message: msg,
		ObservedGeneration: hook.Generation, LastTransitionTime: metav1.NewTime(c.clock.Now()),
	})
}

// permit checks that the requester may exec in the pods an action is
// about to run in, and keeps the answer in the Authorized condition (the
// next status write stores an allowance). A refusal is recorded at once,
// with an Event naming the pod and the missing right.
func (c *Controller) permit(ctx context.Context, hook *hooksv1.ExecutionHook, action string, pods []string) (bool, error) {
	reason, msg, ok, err := c.authorize(ctx, hook, pods)
	if err != nil {
		return false, err
	}
	c.setCondition(hook, hooksv1.ConditionAuthorized, ok, reason, msg)
	if !ok {
		c.event(hook, true, "Forbidden", "%s not run: %s", actionName(action), msg)
	}
	return ok, nil
}

// fail ends a hook that cannot run: PreActionSucceed false with the reason.
func (c *Controller) fail(ctx context.Context, hook *hooksv1.ExecutionHook, msg string) (*hooksv1.ExecutionHook, error) {
	hook.Status.PreActionSucceed = ptr.To(false)
	hook.Status.Message = msg
	c.event(hook, true, "CannotRun", "%s", msg)
	return c.writeStatus(ctx, hook)
}

// runPre runs the PreAction in every selected container that has not
// started it, then writes the summary. A container whose PreAction started
// but has no result (the controller stopped in the middle) is not run
// again: it is marked failed. A deleted hook starts no new PreAction.
func (c *Controller) runPre(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	entries := hook.Status.ContainerExecutionHookStatuses
	if len(entries) == 0 {
		return hook, nil // deleted before anything was selected
	}
	if pods := pendingPods(entries, prePending); hook.DeletionTimestamp == nil && len(pods) > 0 {
		ok, err := c.permit(ctx, hook, actionPre, pods)
		if err != nil {
			return nil, err
		}
		if !ok {
			hook.Status.PreActionSucceed = ptr.To(false)
			hook.Status.Message = meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionAuthorized).Message
			return c.writeStatus(ctx, hook)
		}
	}
	for i := range entries {
		st := entries[i].PreActionStatus
		switch {
		case st != nil && st.ActionSucceed != nil:
			continue
		case st != nil && st.ActionTimestamp != nil:
			msg := "the action started at " + st.ActionTimestamp.UTC().Format(time.RFC3339) +
				" and its end was not seen (the controller stopped); it is not run again"
			st.ActionSucceed, st.Error = ptr.To(false), &hooksv1.HookError{Time: metav1.NewTime(c.clock.Now()), Message: msg}
			c.event(hook, true, "PreActionFailed", "%s/%s: %s", entries[i].PodName, entries[i].ContainerName, msg)
			var err error
			if hook, err = c.writeStatus(ctx, hook); err != nil {
				return nil, err
			}
			entries = hook.Status.ContainerExecutionHookStatuses
		case hook.DeletionTimestamp != nil:
			continue
		default:
			var err error
			if hook, err = c.runAction(ctx, hook, i, actionPre); err != nil {
				return nil, err
			}
			entries = hook.Status.ContainerExecutionHookStatuses
		}
	}
	hook.Status.PreActionSucceed = summary(entries, preOf)
	if hook.Status.PreActionSucceed == nil {
		return hook, nil
	}
	c.summaryEvent(hook, actionPre, *hook.Status.PreActionSucceed)
	return c.writeStatus(ctx, hook)
}

// runPost runs the PostAction in every container where the PreAction
// started and the PostAction has no result, then writes the summary. A
// PostAction interrupted by a stop runs again: it is idempotent by
// contract and must not be skipped, or the application stays frozen.
func (c *Controller) runPost(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	if effectiveSpec(hook).PostAction == nil {
		hook.Status.PostActionSucceed = ptr.To(true)
		return c.writeStatus(ctx, hook)
	}
	if pods := pendingPods(hook.Status.ContainerExecutionHookStatuses, postPending); len(pods) > 0 {
		ok, err := c.permit(ctx, hook, actionPost, pods)
		if err != nil {
			return nil, err
		}
		if !ok {
			return c.refusePost(ctx, hook)
		}
	}
	for i := range hook.Status.ContainerExecutionHookStatuses {
		e := &hook.Status.ContainerExecutionHookStatuses[i]
		if e.PreActionStatus == nil || e.PreActionStatus.ActionTimestamp == nil {
			continue
		}
		if e.PostActionStatus != nil && e.PostActionStatus.ActionSucceed != nil {
			continue
		}
		var err error
		if hook, err = c.runAction(ctx, hook, i, actionPost); err != nil {
			return nil, err
		}
	}
	hook.Status.PostActionSucceed = summary(hook.Status.ContainerExecutionHookStatuses, postOf)
	c.summaryEvent(hook, actionPost, *hook.Status.PostActionSucceed)
	return c.writeStatus(ctx, hook)
}

// refusePost marks the PostAction failed, unrun, in every container where
// it is due, with the Authorized condition's message.
func (c *Controller) refusePost(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	msg := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionAuthorized).Message
	for i := range hook.Status.ContainerExecutionHookStatuses {
		if e := &hook.Status.ContainerExecutionHookStatuses[i]; postPending(e) {
			e.PostActionStatus = &hooksv1.ExecutionHookActionStatus{
				ActionSucceed: ptr.To(false), Error: &hooksv1.HookError{Time: metav1.NewTime(c.clock.Now()), Message: msg},
			}
		}
	}
	hook.Status.PostActionSucceed = ptr.To(false)
	return c.writeStatus(ctx, hook)
}

func (c *Controller) summaryEvent(hook *hooksv1.ExecutionHook, action string, ok bool) {
	name := actionName(action)
	if ok {
		c.event(hook, false, name+"Succeeded", "%s succeeded in every selected container", name)
		return
	}
	c.event(hook, true, name+"Failed", "%s failed in at least one container; see the status", name)
}

func actionName(action string) string {
	if action == actionPre {
		return "PreAction"
	}
	return "PostAction"
}

// runAction runs one action in entry i: the start timestamp is stored
// first, then the command runs (the PostAction retried until its timeout),
// then the result is stored and reported.
func (c *Controller) runAction(ctx context.Context, hook *hooksv1.ExecutionHook, i int, action string) (*hooksv1.ExecutionHook, error) {
	spec := effectiveSpec(hook).PreAction
	if action == actionPost {
		spec = effectiveSpec(hook).PostAction
	}
	st := &hooksv1.ExecutionHookActionStatus{ActionTimestamp: ptr.To(metav1.NewTime(c.clock.Now()))}
	setStatus(hook, i, action, st)
	hook, err := c.writeStatus(ctx, hook)
	if err != nil {
		return nil, err
	}
	e := hook.Status.ContainerExecutionHookStatuses[i]
	timeout := c.opts.DefaultActionTimeout
	if spec.ActionTimeoutSeconds != nil {
		timeout = time.Duration(*spec.ActionTimeoutSeconds) * time.Second
	}
	var out *tailBuffer // the output is read only when the hook asks for it
	if spec.CaptureOutput {
		out = &tailBuffer{max: hooksv1.MaxCapturedOutput}
	}
	start := c.clock.Now()
	result, runErr := c.runCommand(ctx, hook.Namespace, e, command{argv: spec.Exec.Command, out: out}, timeout, action == actionPost)
	if ctx.Err() != nil {
		return nil, ctx.Err() // stopping: the result is unknown and stays so
	}
	took := c.clock.Since(start)
	c.metrics.observe(action, result, took)
	st = &hooksv1.ExecutionHookActionStatus{ActionTimestamp: st.ActionTimestamp}
	st.ActionSucceed = ptr.To(runErr == nil)
	if out != nil {
		st.Output = out.String()
	}
	attrs := []slog.Attr{
		slog.String(logkey.Namespace, hook.Namespace), slog.String(logkey.Name, hook.Name),
		slog.String(logkey.Hook, actionName(action)), slog.String(logkey.Container, e.PodName+"/"+e.ContainerName),
		slog.Duration(logkey.Duration, took),
	}
	if runErr != nil {
		st.Error = &hooksv1.HookError{Time: metav1.NewTime(c.clock.Now()), Message: runErr.Error()}
		c.event(hook, true, actionName(action)+"Failed", "%s/%s: %s", e.PodName, e.ContainerName, runErr.Error())
		c.log.LogAttrs(ctx, slog.LevelWarn, "execution hook action failed", append(attrs, logkey.Err(runErr))...)
	} else {
		c.log.LogAttrs(ctx, slog.LevelInfo, "execution hook action succeeded", attrs...)
	}
	setStatus(hook, i, action, st)
	return c.writeStatus(ctx, hook)
}

// command is an action's command line and, when its output is kept, where
// the output goes.
type command struct {
	argv []string
	out  *tailBuffer // nil: discarded
}

// runCommand runs command in the entry's container within timeout; with
// retry, a failed run is repeated (after a pause that doubles up to 5s)
// until the timeout. A run that could not start (ErrNotStarted: the API
// server or kubelet refused the stream) is repeated also without retry,
// since it cannot have run. It returns the result label and the last
// error.
func (c *Controller) runCommand(ctx context.Context, ns string, e hooksv1.ContainerExecutionHookStatus, cmd command, timeout time.Duration, retry bool) (string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("timed out after %s", timeout))
	defer cancel()
	pause := 500 * time.Millisecond
	for {
		var out io.Writer // a nil *tailBuffer is not a nil Writer
		if cmd.out != nil {
			cmd.out.reset() // the output of the last try is kept
			out = cmd.out
		}
		err := c.exec.Exec(ctx, ns, e.PodName, e.ContainerName, cmd.argv, out)
		if err == nil {
			return resultSuccess, nil
		}
		if ctx.Err() != nil {
			return resultTimeout, fmt.Errorf("%w (last: %w)", context.Cause(ctx), err)
		}
		if !retry && !errors.Is(err, ErrNotStarted) {
			return resultFailure, err
		}
		select {
		case <-ctx.Done():
			return resultTimeout, fmt.Errorf("%w (last: %w)", context.Cause(ctx), err)
		case <-c.clock.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func setStatus(hook *hooksv1.ExecutionHook, i int, action string, st *hooksv1.ExecutionHookActionStatus) {
	if action == actionPre {
		hook.Status.ContainerExecutionHookStatuses[i].PreActionStatus = st
	} else {
		hook.Status.ContainerExecutionHookStatuses[i].PostActionStatus = st
	}
}
