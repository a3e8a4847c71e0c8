package executionhook

import (
	"context"
	"errors"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// watchHooks queues every ExecutionHook of namespace ns ("" for all) that
// exists or changes, until ctx ends: a list, then a watch from the list's
// resource version, again after the watch ends or every Resync. The
// reconcile reads each hook afresh, so the loop only says which to look at.
func (c *Controller) watchHooks(ctx context.Context, ns string) {
	hooks := c.hooks(ns)
	backoff := time.Second
	for ctx.Err() == nil {
		start := c.clock.Now()
		err := c.listAndWatch(ctx, hooks)
		if ctx.Err() != nil {
			return
		}
		if err == nil && c.clock.Since(start) > backoff {
			backoff = time.Second
			continue
		}
		if err == nil {
			// A watch that ends at once (a proxy cutting it) must not
			// make a loop of lists.
			err = errors.New("watch ended right after it started")
		}
		c.log.WarnContext(ctx, "watch execution hooks, will retry", slog.String(logkey.Namespace, ns),
			slog.Duration(logkey.Duration, backoff), logkey.Err(err))
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (c *Controller) listAndWatch(ctx context.Context, hooks dynamic.ResourceInterface) error {
	list, err := hooks.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		c.queue.Add(key(&list.Items[i]))
	}
	timeout := int64(c.opts.Resync.Seconds())
	w, err := hooks.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), TimeoutSeconds: &timeout})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return nil // e.g. the resource version expired: list again
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				c.queue.Add(key(u))
			}
		}
	}
}

func (c *Controller) hooks(ns string) dynamic.ResourceInterface {
	r := c.dyn.Resource(hooksv1.ExecutionHooksGVR())
	if ns == "" {
		return r
	}
	return r.Namespace(ns)
}

func key(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }
