package store

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// Layer is one source of values, lowest priority first in a list.
type Layer struct {
	// Source names where the layer comes from, e.g. "modules/values.yaml",
	// "config-values schema default", "ConfigMap key certManager".
	Source string
	Values values.Values
}

// Leaf is one leaf of the effective values and the layer that set it.
type Leaf struct {
	// Path is the dotted key path, with [i] for list elements.
	Path   string `json:"path"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

// Explain merges layers and attributes every leaf of the result to the
// highest layer that holds that leaf with the same value. A list counts as
// one leaf, since layers replace lists whole.
func Explain(layers []Layer) []Leaf {
	merged := mergeLayers(layers)
	var leaves []Leaf
	walkLeaves(nil, map[string]any(merged), func(path []string, v any) {
		src := "unknown"
		for i := len(layers) - 1; i >= 0; i-- {
			if got, ok := lookup(layers[i].Values, path); ok && reflect.DeepEqual(normalize(got), normalize(v)) {
				src = layers[i].Source
				break
			}
		}
		leaves = append(leaves, Leaf{Path: strings.Join(path, "."), Value: v, Source: src})
	})
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].Path < leaves[j].Path })
	return leaves
}

// walkLeaves calls f for every non-map value below v (an empty map is a
// leaf too, so that "{}" set by a layer is explained).
func walkLeaves(path []string, v any, f func([]string, any)) {
	m, ok := asMap(v)
	if !ok || len(m) == 0 {
		f(slices.Clone(path), v)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		walkLeaves(append(path, k), m[k], f)
	}
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case values.Values:
		return m, true
	}
	return nil, false
}

// lookup finds the value at path in v.
func lookup(v values.Values, path []string) (any, bool) {
	var cur any = map[string]any(v)
	for _, k := range path {
		m, ok := asMap(cur)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// normalize makes values.Values and map[string]any compare equal.
func normalize(v any) any {
	if m, ok := asMap(v); ok {
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = normalize(e)
		}
		return out
	}
	if l, ok := v.([]any); ok {
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// String renders a leaf as "path = value  # source".
func (l Leaf) String() string {
	return fmt.Sprintf("%s = %v  # %s", l.Path, l.Value, l.Source)
}
