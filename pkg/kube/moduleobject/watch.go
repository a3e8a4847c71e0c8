package moduleobject

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// A Module object's status edited by someone else, or the object deleted,
// is written back restoreBaseDelay after the change is seen (several
// changes within it are one write), then, when someone keeps changing
// it, after a delay that doubles up to restoreMaxDelay; restoreQuiet
// without a change starts again at restoreBaseDelay. So a person's edit is
// undone at once, and a controller that fights the operator over an object
// gets one write a minute at most.
const (
	restoreBaseDelay = 200 * time.Millisecond
	restoreMaxDelay  = time.Minute
	restoreQuiet     = 2 * time.Minute
)

// watch runs an informer over this operator's Module objects until ctx
// ends, queueing a check of every object whose status is not what the
// Writer wrote, or that was deleted (observe).
func (w *Writer) watch(ctx context.Context, wg *sync.WaitGroup) {
	selectOurs := func(o *metav1.ListOptions) { o.LabelSelector = NamespaceLabel + "=" + w.opts.Namespace }
	inf := dynamicinformer.NewFilteredDynamicInformer(w.opts.Dynamic, v1.ModulesResource(), "", 0, cache.Indexers{}, selectOurs).Informer()
	// Neither setter fails on an informer that has not started.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil) // the largest part of an object, never read
		}
		return obj, nil
	})
	var failing bool // the last watch attempt failed; the reflector calls the handler from one goroutine
	_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		if !failing {
			w.opts.Logger.Warn("module objects not watched, will retry: a changed or deleted Module object is written back only at its module's next change",
				logkey.Err(err))
		}
		failing = true
	})
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) { w.observe(obj, true) },
	})
	_, _ = inf.AddEventHandler(w.reconcileHandler())
	w.mu.Lock()
	w.watchSynced = reg.HasSynced
	w.mu.Unlock()
	wg.Go(func() { inf.RunWithContext(ctx) })
}

// observe queues a check of a kept module's object when it was deleted or
// its status is neither the last one written nor the one being written.
// The check (restore) asks the API server, so an event that only lags
// behind the Writer's own writes costs one GET and no write.
func (w *Writer) observe(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name := u.GetName()
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	if q == nil || w.keep == nil || !w.keep[name] || w.closing || w.check[name] {
		return
	}
	if _, known := w.want[name]; !known {
		return
	}
	ref, exists := w.objs[name]
	if exists && ref.uid != u.GetUID() {
		return // an object the Writer no longer knows, deleted and created again
	}
	if !deleted {
		var m v1.Module
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err == nil {
			if sameStatus(m.Status, w.written[name]) || (w.inflight[name] != nil && sameStatus(m.Status, *w.inflight[name])) {
				return
			}
		}
	} else if !exists {
		return
	}
	w.check[name] = true
	q.AddAfter(name, w.restoreDelay(name))
}

// restoreDelay returns how long to wait before the check of name's
// object; mu is held.
func (w *Writer) restoreDelay(name string) time.Duration {
	now := w.opts.Clock.Now()
	if last, ok := w.lastRestore[name]; !ok || now.Sub(last) > restoreQuiet {
		w.restoreLimiter.Forget(name)
	}
	w.lastRestore[name] = now
	return w.restoreLimiter.When(name)
}

// restore checks a module's object and writes it again when it was
// deleted (created again, then its status applied) or its status is not
// the last one written (the whole status replaced: fields someone else
// added and owns would survive an apply).
func (w *Writer) restore(ctx context.Context, name string, s State) error {
	u, err := w.res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		w.mu.Lock()
		delete(w.objs, name)
		delete(w.written, name)
		w.mu.Unlock()
		w.opts.Logger.Info("module object deleted by someone else, creating it again", slog.String(logkey.Module, name))
		return w.write(ctx, name, s, true)
	}
	if err != nil {
		return fmt.Errorf("get module object %s: %w", name, err)
	}
	var m v1.Module
	decodeErr := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m)
	w.mu.Lock()
	prev := w.written[name]
	w.mu.Unlock()
	if decodeErr == nil && sameStatus(m.Status, prev) {
		return w.write(ctx, name, s, false) // an event that lagged behind the Writer's own write
	}
	w.opts.Logger.Info("module object status changed by someone else, writing it again", slog.String(logkey.Module, name))
	st := Compute(w.resolveSource(s), u.GetGeneration(), prev.Conditions, w.opts.Clock.Now())
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.Module{Status: st})
	if err != nil {
		return fmt.Errorf("encode module object %s: %w", name, err)
	}
	u.Object["status"] = obj["status"]
	w.mu.Lock()
	w.inflight[name] = &st
	w.mu.Unlock()
	_, err = w.res.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	w.mu.Lock()
	delete(w.inflight, name)
	if err == nil {
		w.written[name] = st
	}
	w.mu.Unlock()
	if err != nil {
		return fmt.Errorf("replace status of module object %s: %w", name, err)
	}
	w.wrote("status")
	return nil
}

// sameStatus compares two statuses as the API server stores them: times
// in whole seconds.
func sameStatus(a, b v1.ModuleStatus) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
