package heal

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
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
	for module, m := range w.modules {
		for _, obj := range m.objects[key] {
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
		if err != nil || before.GetResourceVersion() == after.GetResourceVersion() {
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
