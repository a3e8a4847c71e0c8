package executionhook

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/queue"
)

// get reads the hook from the API server (not a cache: a reconcile must
// see the timestamps it wrote itself). Nil when it is gone.
func (c *Controller) get(ctx context.Context, ns, name string) (*hooksv1.ExecutionHook, error) {
	u, err := c.hooks(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get ExecutionHook %s/%s: %w", ns, name, err)
	}
	hook, err := fromUnstructured(u)
	if err != nil {
		// Reading it again cannot fix it; a change of the object (the
		// watch) or the resync looks again.
		return nil, queue.TerminalError(err)
	}
	return hook, nil
}

func fromUnstructured(u *unstructured.Unstructured) (*hooksv1.ExecutionHook, error) {
	hook := &hooksv1.ExecutionHook{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hook); err != nil {
		return nil, fmt.Errorf("decode ExecutionHook %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return hook, nil
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// update writes the hook's metadata and spec; a conflict is returned (the
// reconcile is retried on fresh data).
func (c *Controller) update(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	u, err := toUnstructured(hook)
	if err != nil {
		return nil, err
	}
	out, err := c.hooks(hook.Namespace).Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update ExecutionHook %s/%s: %w", hook.Namespace, hook.Name, err)
	}
	return fromUnstructured(out)
}

// writeStatus stores hook.Status. The controller is the only writer of the
// status, so on a conflict (someone changed metadata or spec) it puts the
// same status on the fresh object. It returns the stored hook.
func (c *Controller) writeStatus(ctx context.Context, hook *hooksv1.ExecutionHook) (*hooksv1.ExecutionHook, error) {
	status := hook.Status
	target := hook
	var stored *hooksv1.ExecutionHook
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if target == nil {
			fresh, err := c.get(ctx, hook.Namespace, hook.Name)
			if err != nil {
				return err
			}
			if fresh == nil {
				return fmt.Errorf("ExecutionHook %s/%s: gone", hook.Namespace, hook.Name)
			}
			target = fresh
		}
		target.Status = status
		u, err := toUnstructured(target)
		if err != nil {
			return err
		}
		target = nil
		out, err := c.hooks(hook.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		stored, err = fromUnstructured(out)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update status of ExecutionHook %s/%s: %w", hook.Namespace, hook.Name, err)
	}
	return stored, nil
}

// template reads the named ExecutionHookTemplate; nil when it is missing.
func (c *Controller) template(ctx context.Context, ns, name string) (*hooksv1.ExecutionHookTemplate, error) {
	u, err := c.dyn.Resource(hooksv1.ExecutionHookTemplatesGVR()).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get ExecutionHookTemplate %s/%s: %w", ns, name, err)
	}
	tpl := &hooksv1.ExecutionHookTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tpl); err != nil {
		return nil, fmt.Errorf("decode ExecutionHookTemplate %s/%s: %w", ns, name, err)
	}
	return tpl, nil
}

// event records an Event on the hook.
func (c *Controller) event(hook *hooksv1.ExecutionHook, warning bool, reason, format string, args ...any) {
	ref := &unstructured.Unstructured{}
	ref.SetAPIVersion(hooksv1.Group + "/" + hooksv1.Version)
	ref.SetKind("ExecutionHook")
	ref.SetNamespace(hook.Namespace)
	ref.SetName(hook.Name)
	ref.SetUID(hook.UID)
	ref.SetResourceVersion(hook.ResourceVersion)
	typ := "Normal"
	if warning {
		typ = "Warning"
	}
	c.events.Eventf(ref, typ, reason, format, args...)
}

func hasFinalizer(hook *hooksv1.ExecutionHook) bool {
	return slices.Contains(hook.Finalizers, hooksv1.Finalizer)
}

// hooks is the ExecutionHooks resource in namespace ns ("" for all).
func (c *Controller) hooks(ns string) dynamic.ResourceInterface {
	r := c.dyn.Resource(hooksv1.ExecutionHooksGVR())
	if ns == "" {
		return r
	}
	return r.Namespace(ns)
}
