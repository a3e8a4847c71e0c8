package heal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Change reports that a watched object of Module's release was written:
// its live state may have drifted from the manifest. Changes are sent for
// the operator's own writes too (upgrades, reverts); whoever receives them
// debounces and compares. Object is the reference passed to Watch, with
// the object's namespace.
type Change struct {
	Module string
	Object ObjectRef
	// ResourceVersion is the object's after the change.
	ResourceVersion string
}

// updated returns the changes for an update of namespace/name, seen by
// the informer of kind gk: one for each module that watches the object,
// sorted by module. Pauses do not hold changes back: a module's own run
// may be the only thing that changed the object, but an edit made during
// the run must still be compared once the run is done.
func (w *Watcher) updated(gk schema.GroupKind, namespaced bool, namespace, name string) []Change {
	key := healName{group: gk.Group, kind: gk.Kind, name: name}
	w.mu.Lock()
	defer w.mu.Unlock()
	var changes []Change
	for module := range w.watchers[key] {
		for _, obj := range w.modules[module].objects[key] {
			if namespaced && w.objectNamespace(obj) != namespace {
				continue
			}
			obj.Namespace = namespace
			changes = append(changes, Change{Module: module, Object: obj})
			break
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Module, b.Module) })
	return changes
}

// onUpdate sends the changes for an updated (or, with old nil, added)
// object, giving up when the informer stops. A relist delivers unchanged
// objects as updates with the same resourceVersion: those are no change.
func (w *Watcher) onUpdate(ctx context.Context, res healResource, old, obj any) {
	after, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if old != nil {
		before, err := meta.Accessor(old)
		if err != nil || !mayDrift(before, after) {
			return
		}
	}
	for _, ch := range w.updated(res.kind, res.namespaced, after.GetNamespace(), after.GetName()) {
		ch.ResourceVersion = after.GetResourceVersion()
		select {
		case w.changes <- ch:
		case <-ctx.Done():
			return
		}
	}
}

// metaSumKey is the annotation under which driftSlim keeps the checksum
// of an object's labels and annotations.
const metaSumKey = "addon-operator.io/metadata-checksum"

// mayDrift reports whether an update from before to after may have
// drifted the object: its resourceVersion changed, and unless the kind
// counts generations, which only writes to the spec increase, the spec
// (the generation) or the labels and annotations changed too. A status
// update, the most frequent write to workloads, is not drift.
func mayDrift(before, after metav1.Object) bool {
	if before.GetResourceVersion() == after.GetResourceVersion() {
		return false
	}
	if after.GetGeneration() == 0 {
		return true
	}
	return before.GetGeneration() != after.GetGeneration() ||
		before.GetAnnotations()[metaSumKey] != after.GetAnnotations()[metaSumKey]
}

// driftSlim is healSlim that also keeps what mayDrift needs: the
// generation, and a checksum of the labels and annotations in place of
// them. Like every informer transform it is idempotent: an object it
// slimmed already is returned as it is.
func driftSlim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	if _, slimmed := m.Annotations[metaSumKey]; slimmed && len(m.Annotations) == 1 && len(m.Labels) == 0 {
		return obj, nil
	}
	h := sha256.New()
	for _, kv := range []map[string]string{m.Labels, m.Annotations} {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			fmt.Fprintf(h, "%q=%q;", k, kv[k])
		}
		h.Write([]byte{0})
	}
	slim, _ := slimMetadata(obj)
	s, _ := slim.(*metav1.PartialObjectMetadata)
	s.Generation = m.Generation
	s.Annotations = map[string]string{metaSumKey: hex.EncodeToString(h.Sum(nil))}
	return s, nil
}
