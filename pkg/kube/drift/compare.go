package drift

import (
	"maps"
	"reflect"
	"slices"
)

// driftStep is one step of a field path: a map key or struct field, or an
// item of a list.
type driftStep struct {
	// key is the field name; empty for list steps.
	key string
	// index is the item's position in the list of the applied object (the
	// dry-run result); -1 for field steps. Paths name items by it.
	index int
	// live is the position of the live item it was compared with, -1 when
	// there is none; item is that live item.
	live int
	item any
}

func driftField(key string) driftStep { return driftStep{key: key, index: -1, live: -1} }

func (s driftStep) isList() bool { return s.index >= 0 }

// driftWith returns a new path: path followed by step. Paths are kept, so
// they never share a backing array.
func driftWith(path []driftStep, step driftStep) []driftStep {
	return append(slices.Clip(path), step)
}

// driftDiffs returns the paths where applied, the result of a dry-run
// server-side apply of the manifest object onto the live object, differs
// from live, in the order of sorted keys. Both objects come from the API
// server, so defaulting, canonical quantities, Secret stringData and the
// merging of lists (associative lists by their keys, atomic lists whole)
// are already the same on both sides: whatever differs is a field the
// manifest sets to another value than the live one.
//
// Compared are all top-level fields except apiVersion, kind, status and
// metadata, and of metadata only labels and annotations: the rest of
// metadata (resourceVersion, generation, managedFields, timestamps) is
// noise that a dry run changes by itself.
func driftDiffs(applied, live map[string]any) [][]driftStep {
	var out [][]driftStep
	for _, key := range unionKeys(applied, live) {
		switch key {
		case "apiVersion", "kind", "status":
		case "metadata":
			appliedMeta, _ := applied[key].(map[string]any)
			liveMeta, _ := live[key].(map[string]any)
			for _, sub := range []string{"annotations", "labels"} {
				walk(&out, []driftStep{driftField(key), driftField(sub)}, appliedMeta[sub], liveMeta[sub])
			}
		default:
			walk(&out, []driftStep{driftField(key)}, applied[key], live[key])
		}
	}
	return out
}

// walk appends to out the paths below path where applied differs from
// live. Maps are compared key by key, lists item by item by position (the
// server keeps the live order and merges the manifest's items into it), and
// scalars by value; numbers compare by value whatever their Go type. A
// value present on one side only, or of another type, is one difference
// at path. An empty map or list counts as absent.
func walk(out *[][]driftStep, path []driftStep, applied, live any) {
	if empty(applied) && empty(live) {
		return
	}
	switch a := applied.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for _, key := range unionKeys(a, l) {
			walk(out, driftWith(path, driftField(key)), a[key], l[key])
		}
	case []any:
		l, ok := live.([]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		for i := range max(len(a), len(l)) {
			step := driftStep{index: i, live: -1}
			var av, lv any
			if i < len(a) {
				av = a[i]
			}
			if i < len(l) {
				step.live, step.item, lv = i, l[i], l[i]
			}
			if i >= len(a) || i >= len(l) {
				*out = append(*out, driftWith(path, step))
				continue
			}
			walk(out, driftWith(path, step), av, lv)
		}
	default:
		if !scalarEqual(applied, live) {
			*out = append(*out, path)
		}
	}
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

// scalarEqual reports whether two scalars decoded from JSON are equal;
// numbers compare by value, as one side may hold int64 and the other
// float64.
func scalarEqual(a, b any) bool {
	if an, ok := driftNumber(a); ok {
		bn, ok := driftNumber(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}

// driftNumber returns a JSON number as float64. Integers beyond 2^53 lose
// precision, which only matters for values no manifest sets.
func driftNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	case float64:
		return v, true
	default:
		return 0, false
	}
}

// unionKeys returns the keys of a and b, sorted, without duplicates.
func unionKeys(a, b map[string]any) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}
