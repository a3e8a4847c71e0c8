package drift

import (
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// driftStep is one step of a field path: a map key or struct field, or an
// item of a list.
type driftStep struct {
	// key is the field name; empty for list steps.
	key string
	// index is the item's position in the manifest's list; -1 for field
	// steps. Paths name items by it.
	index int
	// live is the position of the matching live item, -1 when there is
	// none; item is that live item.
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

// driftDiffs returns the paths of the fields that manifest object want sets
// and whose value in the live object differs, in the order of want's sorted
// keys. Compared are all top-level fields except apiVersion, kind, status
// and metadata, and of metadata only the labels and annotations want sets.
// See walk for what counts as set and as equal.
func driftDiffs(want, live map[string]any) [][]driftStep {
	var out [][]driftStep
	for _, key := range slices.Sorted(maps.Keys(want)) {
		switch key {
		case "apiVersion", "kind", "status":
		case "metadata":
			wantMeta, _ := want[key].(map[string]any)
			liveMeta, _ := live[key].(map[string]any)
			for _, sub := range []string{"annotations", "labels"} {
				lv, ok := liveMeta[sub]
				walk(&out, []driftStep{driftField(key), driftField(sub)}, wantMeta[sub], lv, ok)
			}
		default:
			lv, ok := live[key]
			walk(&out, []driftStep{driftField(key)}, want[key], lv, ok)
		}
	}
	return out
}

// walk appends to out the paths below path where want differs from
// live (present says whether live exists at all). A null in want sets
// nothing, nor does an empty map; an empty list says the live list is
// empty or absent. Maps are compared key by key and lists item by item (see
// match); items the live list has beyond want's are not compared, so
// items other parties add are no difference. Scalars compare by
// scalarEqual.
func walk(out *[][]driftStep, path []driftStep, want, live any, present bool) {
	switch w := want.(type) {
	case nil:
	case map[string]any:
		liveMap, ok := live.(map[string]any)
		if present && live != nil && !ok {
			*out = append(*out, path)
			return
		}
		for _, key := range slices.Sorted(maps.Keys(w)) {
			lv, ok := liveMap[key]
			walk(out, driftWith(path, driftField(key)), w[key], lv, ok)
		}
	case []any:
		liveList, ok := live.([]any)
		if (present && live != nil && !ok) || (len(w) == 0 && len(liveList) > 0) {
			*out = append(*out, path)
			return
		}
		for i, item := range w {
			step := driftStep{index: i, live: match(item, liveList, i)}
			var lv any
			if step.live >= 0 {
				lv = liveList[step.live]
				step.item = lv
			}
			walk(out, driftWith(path, step), item, lv, step.live >= 0)
		}
	default:
		if !scalarEqual(path, w, live, present) {
			*out = append(*out, path)
		}
	}
}

// match returns the position in live of the item that manifest item
// want (at position i of its list) is compared with, or -1. An item that
// is a map with a string "name" matches the live item of that name
// (containers, env, volumes, ports), so items others insert do not shift
// the comparison; any other item matches by position.
func match(want any, live []any, i int) int {
	if m, ok := want.(map[string]any); ok {
		if name, ok := m["name"].(string); ok {
			return slices.IndexFunc(live, func(item any) bool {
				l, ok := item.(map[string]any)
				return ok && l["name"] == name
			})
		}
	}
	if i < len(live) {
		return i
	}
	return -1
}

// scalarEqual reports whether manifest scalar want equals live. An
// absent or null live value equals a zero want ("", 0, false), which the
// API server drops from typed objects. Numbers compare by value whatever
// their Go type. Outside data, stringData, binaryData and metadata, two
// values that parse as resource quantities compare as quantities, as the
// server canonicalises them ("1024Mi" is stored as "1Gi", a number 1 as "1").
func scalarEqual(path []driftStep, want, live any, present bool) bool {
	if !present || live == nil {
		return driftZero(want)
	}
	if wn, ok := driftNumber(want); ok {
		if ln, ok := driftNumber(live); ok && wn == ln {
			return true
		}
	}
	if want == live {
		return true
	}
	if len(path) > 0 && !slices.Contains([]string{"data", "stringData", "binaryData", "metadata"}, path[0].key) {
		wq, wok := driftQuantity(want)
		lq, lok := driftQuantity(live)
		return wok && lok && wq.Cmp(lq) == 0
	}
	return false
}

func driftZero(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case bool:
		return !v
	default:
		n, ok := driftNumber(v)
		return ok && n == 0
	}
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

func driftQuantity(v any) (resource.Quantity, bool) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}
