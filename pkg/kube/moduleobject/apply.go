package moduleobject

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// start lists this operator's objects until it can, remembering them; it
// reports false when objects are off for good or ctx ended.
func (w *Writer) start(ctx context.Context) bool {
	for {
		list, err := w.res.List(ctx, metav1.ListOptions{LabelSelector: NamespaceLabel + "=" + w.opts.Namespace})
		if err == nil {
			w.remember(list.Items)
			return true
		}
		if w.turnOff(err) {
			return false
		}
		w.opts.Logger.Warn("module objects not listed, will retry", logkey.Err(err))
		select {
		case <-ctx.Done():
			return false
		case <-w.opts.Clock.After(retryDelay):
		}
	}
}

// turnOff switches objects off, with one log line, when err says the CRD
// is missing or the operator may not use it.
func (w *Writer) turnOff(err error) bool {
	var reason string
	switch {
	case apierrors.IsNotFound(err):
		reason = "the CustomResourceDefinition modules." + v1.Group + " is not installed"
	case apierrors.IsForbidden(err):
		reason = "the operator may not list, create, patch or delete modules." + v1.Group
	default:
		return false
	}
	if !w.off.Swap(true) {
		w.opts.Logger.Warn("module objects off: modules are not shown as Module objects; the operator works on without them",
			slog.String(logkey.Reason, reason), logkey.Err(err))
		close(w.offCh)
	}
	return true
}

func (w *Writer) remember(items []unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range items {
		u := &items[i]
		w.objs[u.GetName()] = objRef{uid: u.GetUID(), gen: u.GetGeneration(), labels: definitionLabels(u.GetLabels())}
		var m v1.Module
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err == nil {
			w.written[u.GetName()] = m.Status
		}
	}
}

func (w *Writer) remove(ctx context.Context, name string) error {
	err := w.res.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete module object %s of a gone module: %w", name, err)
	}
	if err == nil {
		w.wrote("delete")
	}
	w.mu.Lock()
	delete(w.objs, name)
	delete(w.written, name)
	w.mu.Unlock()
	w.opts.Logger.Info("module object of a gone module deleted", slog.String(logkey.Module, name))
	return nil
}

// write brings one module's object up to state s: it creates the object
// when it is not known and applies the status when it differs from the
// last one written, or when force says the object's status is not that.
func (w *Writer) write(ctx context.Context, name string, s State, force bool) error {
	s = w.resolveSource(s)
	for attempt := 0; ; attempt++ {
		w.mu.Lock()
		ref, known := w.objs[name]
		prev := w.written[name]
		w.mu.Unlock()
		if !known || !maps.Equal(ref.labels, s.Labels) {
			// New, or module.yaml's labels changed since it was written.
			var err error
			if ref, err = w.create(ctx, name, s); err != nil {
				return err
			}
		}
		st := Compute(s, ref.gen, prev.Conditions, w.opts.Clock.Now())
		if apiequality.Semantic.DeepEqual(st, prev) && !force {
			return nil
		}
		w.mu.Lock()
		w.inflight[name] = &st
		w.mu.Unlock()
		err := w.applyStatus(ctx, name, st)
		w.mu.Lock()
		delete(w.inflight, name)
		if err == nil {
			w.written[name] = st
		}
		w.mu.Unlock()
		if apierrors.IsNotFound(err) && attempt == 0 {
			// Deleted by someone: create it again.
			w.mu.Lock()
			delete(w.objs, name)
			delete(w.written, name)
			w.mu.Unlock()
			continue
		}
		return err
	}
}

func (w *Writer) create(ctx context.Context, name string, s State) (objRef, error) {
	labels := map[string]any{}
	for k, v := range w.ownLabels(s) {
		labels[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.APIVersion, "kind": v1.KindModule,
		"metadata": map[string]any{"name": name, "labels": labels},
	}}
	got, err := w.res.Apply(ctx, name, u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return objRef{}, fmt.Errorf("create module object %s: %w", name, err)
	}
	w.wrote("create")
	// Applied with force: the definition labels are those of s now.
	ref := objRef{uid: got.GetUID(), gen: got.GetGeneration(), labels: maps.Clone(s.Labels)}
	w.mu.Lock()
	w.objs[name] = ref
	w.mu.Unlock()
	return ref, nil
}

func (w *Writer) applyStatus(ctx context.Context, name string, st v1.ModuleStatus) error {
	m := v1.Module{TypeMeta: metav1.TypeMeta{APIVersion: v1.APIVersion, Kind: v1.KindModule}, ObjectMeta: metav1.ObjectMeta{Name: name}, Status: st}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err != nil {
		return fmt.Errorf("encode module object %s: %w", name, err)
	}
	delete(obj["metadata"].(map[string]any), "creationTimestamp")
	_, err = w.res.ApplyStatus(ctx, name, &unstructured.Unstructured{Object: obj}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("apply status of module object %s: %w", name, err)
	}
	w.wrote("status")
	return nil
}

// resolveSource names the configuration source in force in a state that
// says "the ConfigMap".
func (w *Writer) resolveSource(s State) State {
	if s.By == status.SourceConfigMap && w.opts.ConfigSource != nil {
		s.By = status.Source(w.opts.ConfigSource())
	}
	return s
}
