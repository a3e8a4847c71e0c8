package monitor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/itchyny/gojq"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/pkg/jq"
)

// monitorEntry is all a monitor keeps of one object. The store of an
// informer that serves one monitor holds entries instead of objects (the
// transform makes them), so an object the binding does not keep in full is
// dropped as soon as it is filtered; on a shared informer a kept object's
// JSON is the shared watchObject's, not a copy. An entry is immutable once
// made.
type monitorEntry struct {
	namespace, name, resourceVersion string
	// object is the object as JSON, as the API server sent it
	// (managedFields included, as hooks of the protocol expect); nil unless
	// the binding keeps full objects.
	object json.RawMessage
	// filterResult is the jqFilter result as JSON; nil without jqFilter.
	filterResult json.RawMessage
	// checksum is taken over filterResult, or without jqFilter over the
	// object minus the fields every write changes (noiseFields); equal
	// checksums make a Modified event redundant.
	checksum [sha256.Size]byte
	// err is why the jq filter (or encoding) failed; such an entry carries
	// nothing else but the identity.
	err error
}

// GetObjectMeta gives the informer's store and key functions the identity
// and resourceVersion they need; it allocates, so entries stay small.
func (e *monitorEntry) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: e.namespace, Name: e.name, ResourceVersion: e.resourceVersion}
}

// noiseFields are metadata fields left out of the checksum of a binding
// without jqFilter: resourceVersion changes on every write, generation only
// with a spec change that the checksum sees anyway, and managedFields with
// every write of another manager. A write that only touches them (a server-side
// apply of unchanged values by another manager) is not a change for hooks.
func noiseFields() []string { return []string{"resourceVersion", "generation", "managedFields"} }

// monitorFilter turns objects into entries for one binding.
type monitorFilter struct {
	// jq is the compiled jqFilter; nil without one.
	jq       *gojq.Code
	keepFull bool
}

// compileJQ compiles a binding's jqFilter once; "" gives nil.
func compileJQ(filter string) (*gojq.Code, error) {
	if filter == "" {
		return nil, nil
	}
	return jq.Compile(filter)
}

// transform is the transform of an informer that serves this binding
// alone: it replaces an object by its entry and passes anything else (an
// entry already made) through. It never fails, as client-go drops objects
// whose transform fails; a failure is kept in the entry instead.
func (f monitorFilter) transform(ctx context.Context, obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	return f.entry(ctx, u)
}

// entry filters u, which it may modify (transforms own their input).
func (f monitorFilter) entry(ctx context.Context, u *unstructured.Unstructured) *monitorEntry {
	e := &monitorEntry{namespace: u.GetNamespace(), name: u.GetName(), resourceVersion: u.GetResourceVersion()}
	var err error
	if f.keepFull {
		if e.object, err = marshal(u.Object); err != nil {
			e.object, e.err = nil, fmt.Errorf("encode object: %w", err)
			return e
		}
	}
	if f.jq != nil {
		if e.filterResult, err = runJQ(ctx, f.jq, u.Object); err != nil {
			e.object, e.err = nil, fmt.Errorf("jq filter: %w", err)
			return e
		}
		e.checksum = sha256.Sum256(e.filterResult)
		return e
	}
	if e.checksum, err = objectChecksum(u.Object); err != nil {
		e.object, e.err = nil, fmt.Errorf("encode object: %w", err)
	}
	return e
}

// sharedEntry is what the binding keeps of n's object, which a shared
// informer reported.
func (f monitorFilter) sharedEntry(ctx context.Context, n *watchNote) *monitorEntry {
	o := n.obj
	e := &monitorEntry{namespace: o.namespace, name: o.name, resourceVersion: o.resourceVersion}
	if o.err != nil {
		e.err = o.err
		return e
	}
	if f.keepFull {
		e.object = o.raw
	}
	if f.jq == nil {
		e.checksum = o.checksum
		return e
	}
	obj, err := n.object()
	if err == nil {
		e.filterResult, err = runJQ(ctx, f.jq, obj)
	}
	if err != nil {
		e.object, e.err = nil, fmt.Errorf("jq filter: %w", err)
		return e
	}
	e.checksum = sha256.Sum256(e.filterResult)
	return e
}

// objectChecksum hashes obj without noiseFields, leaving obj as it is.
func objectChecksum(obj map[string]any) ([sha256.Size]byte, error) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		for _, k := range noiseFields() {
			delete(md, k)
		}
		obj = maps.Clone(obj)
		obj["metadata"] = md
	}
	data, err := marshal(obj)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(data), nil
}

// runJQ runs code on obj as the reference does: no output gives null,
// one output that value, several an array of them; halt with no value ends
// the output early.
func runJQ(ctx context.Context, code *gojq.Code, obj map[string]any) (json.RawMessage, error) {
	iter := code.RunWithContext(ctx, jq.Input(obj))
	var out []any
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			return nil, err
		}
		out = append(out, v)
	}
	switch len(out) {
	case 0:
		return json.RawMessage("null"), nil
	case 1:
		return marshal(out[0])
	default:
		return marshal(out)
	}
}

// marshal encodes v as compact JSON without HTML escaping (as jq prints
// it) into a slice of exactly its length, since entries live long.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
