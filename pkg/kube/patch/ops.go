package patch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/itchyny/gojq"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/jq"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// deleteWait bounds how long Delete waits for the garbage collector to
// remove the object after its dependents, as in the reference
// implementation.
const deleteWait = 20 * time.Second

// createOrUpdateAttempts bounds how often CreateOrUpdate starts over when
// the object it found existing was deleted before its Update.
const createOrUpdateAttempts = 3

func (p *Patcher) create(ctx context.Context, op operation.Operation) error {
	if op.Object == nil {
		return errors.New("object is required")
	}
	res, err := p.resource(ctx, op.APIVersion, op.Kind, op.Namespace)
	if err != nil {
		return err
	}
	name := op.Name
	// The API server refuses a resourceVersion on create; hooks that copy an
	// object from a snapshot carry one.
	obj := op.Object.DeepCopy()
	obj.SetResourceVersion("")
	// CreateOrUpdate races with whoever deletes the object: it can exist
	// at Create and be gone at Update. Then it is created again, a bounded
	// number of times.
	for attempt := 1; ; attempt++ {
		created, err := res.Create(ctx, obj, metav1.CreateOptions{})
		switch {
		case err == nil:
			name = created.GetName() // set by the server from generateName
			p.log.DebugContext(ctx, "object created",
				slog.String(logkey.Kind, op.Kind), slog.String(logkey.Namespace, op.Namespace), slog.String(logkey.Name, name))
		case !apierrors.IsAlreadyExists(err) || op.Type == operation.Create:
			return err
		case op.Type == operation.CreateIfNotExists:
			return nil
		default: // CreateOrUpdate
			err := p.replace(ctx, res, op.Object, "")
			if apierrors.IsNotFound(err) && attempt < createOrUpdateAttempts {
				continue
			}
			if err != nil {
				return err
			}
			p.log.DebugContext(ctx, "object updated", objectAttrs(op)...)
		}
		break
	}
	if op.Subresource == "" {
		return nil
	}
	desired := op.Object.DeepCopy()
	desired.SetName(name)
	if err := p.replace(ctx, res, desired, op.Subresource); err != nil {
		return fmt.Errorf("update %s: %w", op.Subresource, err)
	}
	return nil
}

// replace updates the object, or its subresource, to desired at the live
// resourceVersion, retrying on conflicts.
func (p *Patcher) replace(ctx context.Context, res dynamic.ResourceInterface, desired *unstructured.Unstructured, subresource string) error {
	return kube.RetryOnConflict(ctx, func(ctx context.Context) error {
		live, err := res.Get(ctx, desired.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj := desired.DeepCopy()
		obj.SetResourceVersion(live.GetResourceVersion())
		_, err = res.Update(ctx, obj, metav1.UpdateOptions{}, subresources(subresource)...)
		return err
	})
}

func (p *Patcher) delete(ctx context.Context, op operation.Operation) error {
	res, err := p.resource(ctx, op.APIVersion, op.Kind, op.Namespace)
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationForeground
	switch op.Type {
	case operation.DeleteInBackground:
		policy = metav1.DeletePropagationBackground
	case operation.DeleteNonCascading:
		policy = metav1.DeletePropagationOrphan
	}
	err = res.Delete(ctx, op.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	p.log.DebugContext(ctx, "object deleted", objectAttrs(op)...)
	if policy != metav1.DeletePropagationForeground {
		return nil
	}
	return p.waitDeleted(ctx, res, op.Name)
}

// waitDeleted returns when the object is gone or has been replaced by
// another of the same name, watching it between checks.
func (p *Patcher) waitDeleted(ctx context.Context, res dynamic.ResourceInterface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, deleteWait)
	defer cancel()
	var uid types.UID
	for {
		live, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("wait for deletion: %w", err)
		}
		if uid != "" && live.GetUID() != uid {
			return nil
		}
		uid = live.GetUID()
		gone, err := watchDeleted(ctx, res, live)
		if gone || err != nil {
			return err
		}
	}
}

// watchDeleted watches live from its resourceVersion until it is
// deleted (true) or the watch ends early (false: look again).
func watchDeleted(ctx context.Context, res dynamic.ResourceInterface, live *unstructured.Unstructured) (bool, error) {
	w, err := res.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", live.GetName()).String(),
		ResourceVersion: live.GetResourceVersion(),
	})
	if err != nil {
		return false, fmt.Errorf("wait for deletion: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("wait for deletion (finalizers %v): %w", live.GetFinalizers(), ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				return true, nil
			}
		}
	}
}

func (p *Patcher) patch(ctx context.Context, op operation.Operation) error {
	res, err := p.resource(ctx, op.APIVersion, op.Kind, op.Namespace)
	if err != nil {
		return err
	}
	patchType, data := types.MergePatchType, op.MergePatch
	if op.Type == operation.JSONPatch {
		patchType, data = types.JSONPatchType, op.JSONPatch
	}
	_, err = res.Patch(ctx, op.Name, patchType, data, metav1.PatchOptions{}, subresources(op.Subresource)...)
	if op.IgnoreMissingObject && isMissing(err, op.Name) {
		p.log.DebugContext(ctx, "missing object not patched", objectAttrs(op)...)
		return nil
	}
	if err != nil {
		return err
	}
	p.log.DebugContext(ctx, "object patched", objectAttrs(op)...)
	return nil
}

// objectAttrs name op's object in a log line.
func objectAttrs(op operation.Operation) []any {
	return []any{slog.String(logkey.Kind, op.Kind), slog.String(logkey.Namespace, op.Namespace), slog.String(logkey.Name, op.Name)}
}

func (p *Patcher) jqPatch(ctx context.Context, op operation.Operation) error {
	code, err := jq.Compile(op.JQFilter)
	if err != nil {
		return fmt.Errorf("jqFilter: %w", err)
	}
	res, err := p.resource(ctx, op.APIVersion, op.Kind, op.Namespace)
	if err != nil {
		return err
	}
	return kube.RetryOnConflict(ctx, func(ctx context.Context) error {
		live, err := res.Get(ctx, op.Name, metav1.GetOptions{})
		if op.IgnoreMissingObject && isMissing(err, op.Name) {
			p.log.DebugContext(ctx, "missing object not patched", objectAttrs(op)...)
			return nil
		}
		if err != nil {
			return err
		}
		patched, err := runJQ(ctx, code, live)
		if err != nil || patched == nil {
			return err
		}
		if _, err := res.Update(ctx, patched, metav1.UpdateOptions{}, subresources(op.Subresource)...); err != nil {
			return err
		}
		p.log.DebugContext(ctx, "object patched", objectAttrs(op)...)
		return nil
	})
}

// runJQ runs the filter on the object and returns its single result
// as an object, or nil when the result equals the input.
func runJQ(ctx context.Context, code *gojq.Code, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	before, err := json.Marshal(live.Object)
	if err != nil {
		return nil, err
	}
	iter := code.RunWithContext(ctx, jq.Input(live.Object))
	result, ok := iter.Next()
	if !ok {
		return nil, errors.New("jqFilter produced no result")
	}
	if err, isErr := result.(error); isErr {
		return nil, fmt.Errorf("jqFilter: %w", err)
	}
	if _, more := iter.Next(); more {
		return nil, errors.New("jqFilter produced more than one result")
	}
	after, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("jqFilter result: %w", err)
	}
	if bytes.Equal(before, after) {
		return nil, nil
	}
	if _, isObject := result.(map[string]any); !isObject {
		return nil, fmt.Errorf("jqFilter result is %s, want an object", values.KindOf(result))
	}
	patched := &unstructured.Unstructured{}
	if err := patched.UnmarshalJSON(after); err != nil {
		return nil, fmt.Errorf("jqFilter result: %w", err)
	}
	return patched, nil
}
