package drift

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// appliedFields returns the fields the manifest sets, as the API server
// tracks them: the set of FieldManager's Apply entry in the managedFields of
// the dry-run answer. The server computed it with the kind's schema, so
// associative list items are named by their keys (containers by name,
// volume mounts by mount path) and atomic values are leaves. Without
// that entry the set is empty: the server keeps no entry of a manager that
// owns nothing, as for a manifest object of a name alone.
func appliedFields(entries []metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	for _, e := range entries {
		if e.Manager != FieldManager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" {
			continue
		}
		return decodeFields(e)
	}
	return &fieldpath.Set{}, nil
}

// decodeFields decodes one managedFields entry's fieldsV1 set. An entry in
// another format, or without fields, owns nothing.
func decodeFields(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if e.FieldsType != "FieldsV1" || e.FieldsV1 == nil {
		return set, nil
	}
	if err := set.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
		return nil, fmt.Errorf("managedFields of %q: %w", e.Manager, err)
	}
	return set, nil
}

// controllerFields returns the union of the fields the controllers among
// a live object's managers own (see isController). Entries of subresources
// count like the others: a controller scaling through /scale owns
// spec.replicas.
func controllerFields(entries []metav1.ManagedFieldsEntry, extra []string) (*fieldpath.Set, error) {
	owned := &fieldpath.Set{}
	for _, e := range entries {
		if !isController(e.Manager, extra) {
			continue
		}
		set, err := decodeFields(e)
		if err != nil {
			return nil, err
		}
		owned = owned.Union(set)
	}
	return owned, nil
}

// driftPaths returns the fields of set, the fields the manifest sets,
// whose value in applied (the dry-run answer) differs from live's, in the
// set's order. Only leaves are compared: a map or list item the manifest
// sets is compared through the fields it sets in it, an atomic value
// whole. Of metadata only labels and annotations count, status never:
// the rest is the server's bookkeeping. A field controllers own (owned),
// and a webhook's caBundle, which CA injectors fill, are not drift.
func driftPaths(set, owned *fieldpath.Set, applied, live map[string]any) []fieldpath.Path {
	var out []fieldpath.Path
	for path := range set.Leaves().All() {
		if !compared(path) || owned.Has(path) {
			continue
		}
		if n := len(path); path[n-1].FieldName != nil && *path[n-1].FieldName == "caBundle" {
			continue
		}
		a, _ := lookup(applied, path)
		l, _ := lookup(live, path)
		if !equal(a, l) {
			out = append(out, path.Copy())
		}
	}
	return out
}

// compared reports whether a change of the field at path can be drift:
// anything but apiVersion, kind and status, and of metadata only labels
// and annotations.
func compared(path fieldpath.Path) bool {
	if len(path) == 0 || path[0].FieldName == nil {
		return false
	}
	switch *path[0].FieldName {
	case "apiVersion", "kind", "status":
		return false
	case "metadata":
		return len(path) > 2 && path[1].FieldName != nil &&
			(*path[1].FieldName == "labels" || *path[1].FieldName == "annotations")
	default:
		return true
	}
}

// lookup returns the value at path in obj, a decoded JSON object: a field
// of a map, the item of a list with the key fields' values, the item equal
// to a value, or the item at an index. ok is false when there is none.
func lookup(obj any, path fieldpath.Path) (v any, ok bool) {
	v = obj
	for _, pe := range path {
		switch {
		case pe.FieldName != nil:
			m, isMap := v.(map[string]any)
			if v, ok = m[*pe.FieldName]; !isMap || !ok {
				return nil, false
			}
		case pe.Index != nil:
			list, _ := v.([]any)
			if *pe.Index < 0 || *pe.Index >= len(list) {
				return nil, false
			}
			v = list[*pe.Index]
		default:
			list, _ := v.([]any)
			i := slices.IndexFunc(list, func(item any) bool { return matches(pe, item) })
			if i < 0 {
				return nil, false
			}
			v = list[i]
		}
	}
	return v, true
}

// matches reports whether item is the list item the key or value
// element pe names.
func matches(pe fieldpath.PathElement, item any) bool {
	switch {
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			got, ok := m[f.Name]
			if !ok || !value.Equals(value.NewValueInterface(got), f.Value) {
				return false
			}
		}
		return len(*pe.Key) > 0
	case pe.Value != nil:
		return value.Equals(value.NewValueInterface(item), *pe.Value)
	default:
		return false
	}
}

// equal reports whether two decoded JSON values are equal, numbers by
// value whatever their Go type; an empty map or list counts as absent.
func equal(a, b any) bool {
	if empty(a) || empty(b) {
		return empty(a) && empty(b)
	}
	return value.Equals(value.NewValueInterface(a), value.NewValueInterface(b))
}

// empty reports whether v is absent: nil, an empty map or an empty list.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	default:
		return false
	}
}

// defaultControllers are managers, beyond those whose name contains
// "controller", that change fields of objects they do not create.
func defaultControllers() []string {
	return []string{"horizontal-pod-autoscaler", "vpa-updater", "vpa-recommender"}
}

// isController reports whether manager is a controller: its name
// contains "controller" (kube-controller-manager, cloud-controller-manager,
// most operators), it is a known autoscaler, or one of extra.
func isController(manager string, extra []string) bool {
	return strings.Contains(strings.ToLower(manager), "controller") ||
		slices.Contains(defaultControllers(), manager) ||
		slices.Contains(extra, manager)
}
