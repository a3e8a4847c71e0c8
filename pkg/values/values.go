// Package values owns the operator's values: the Values tree, its layered
// merge, JSON patches from hooks and their roots, YAML 1.2 decoding, and
// canonical checksums (the schemas are pkg/values/schema).
package values

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Values is a tree of JSON-compatible data: maps with string keys, slices,
// strings, float64/int64 numbers, booleans and nil. The top-level keys are
// "global" and module keys (camelCase module names).
//
// Trees produced by this package hold nested maps as map[string]any and
// slices as []any; functions here also accept nested Values.
type Values map[string]any

// FromYAML decodes a YAML document into Values with YAML 1.2 core rules:
// only true and false are booleans (on, off, yes, no, y, n stay strings),
// and every number becomes float64 as in JSON. Empty input, or a document that is only comments or null, yields empty
// Values. A top level that is not a map is an error naming what it is.
func FromYAML(data []byte) (Values, error) {
	tree, err := DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("decode yaml values: %w", err)
	}
	return topLevel(tree)
}

// FromJSON decodes a JSON document into Values; numbers become float64.
// Empty or whitespace-only input, or null, yields empty Values. A top level
// that is not an object is an error naming what it is.
func FromJSON(data []byte) (Values, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Values{}, nil
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("decode json values: %w", err)
	}
	return topLevel(tree)
}

func topLevel(tree any) (Values, error) {
	switch t := tree.(type) {
	case nil:
		return Values{}, nil
	case map[string]any:
		return Values(t), nil
	default:
		return nil, fmt.Errorf("values top level is %s, want a map", KindOf(t))
	}
}

// KindOf names the JSON kind of a decoded value ("a map", "a number",
// "null"...) for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, Values:
		return "a map"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// DeepCopy returns a copy that shares no maps or []any slices with v; nested
// Values become map[string]any. Values of other types (scalars, and any
// non-JSON types a caller put in) are copied by assignment. A nil v yields
// empty, non-nil Values.
func (v Values) DeepCopy() Values {
	out := make(Values, len(v))
	for k, val := range v {
		out[k] = deepCopy(val)
	}
	return out
}

// CopyTree returns a deep copy of a JSON-compatible tree: maps and slices
// are copied, scalars assigned.
func CopyTree(v any) any { return deepCopy(v) }

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[k] = deepCopy(val)
		}
		return out
	case Values:
		return map[string]any(t.DeepCopy())
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = deepCopy(val)
		}
		return out
	default:
		return v
	}
}

// asMap returns v as a map if it is one (map[string]any or Values).
func asMap(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case Values:
		return t, true
	default:
		return nil, false
	}
}

// Section returns a deep copy of the map stored under key, or empty Values
// when the key is missing or holds something other than a map. The result
// is never nil and never aliases v.
func (v Values) Section(key string) Values {
	m, ok := asMap(v[key])
	if !ok {
		return Values{}
	}
	return Values(m).DeepCopy()
}
