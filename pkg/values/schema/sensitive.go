package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// Sensitive returns the scalar values of section (one section's values,
// without its key) that the schema of kind marks sensitive, for redaction
// from texts that leave the process. A schema marks a value sensitive with
// any of:
//
//   - x-sensitive: true (this operator's extension);
//   - x-sensitive-data (the OpenAPI extension registry's marker, with its
//     mask) of any value but false;
//   - writeOnly: true (OpenAPI 3: never sent back);
//   - format: password.
//
// Everything under a sensitive schema is sensitive: an object marked so
// gives every scalar inside it. Values are walked with the schema as
// ApplyDefaults walks them (properties, patternProperties,
// additionalProperties, items), and through every branch of allOf, anyOf
// and oneOf. Strings are returned as they are, numbers and booleans as
// JSON writes them; section is not changed.
func (s *Schemas) Sensitive(kind Kind, section values.Values) []string {
	sc := s.get(kind)
	if sc == nil || !sc.hasSensitive {
		return nil
	}
	var out []string
	walkSensitive(sc.doc, map[string]any(section), false, sc.patterns, &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// marksSensitive reports whether a schema node carries a sensitive marker.
func marksSensitive(node map[string]any) bool {
	if v, ok := node["x-sensitive"].(bool); ok && v {
		return true
	}
	if v, ok := node["x-sensitive-data"]; ok && v != false && v != nil {
		return true
	}
	if v, ok := node["writeOnly"].(bool); ok && v {
		return true
	}
	return node["format"] == "password"
}

// anySensitive reports whether node or a schema under it is marked.
func anySensitive(node any) bool {
	switch t := node.(type) {
	case map[string]any:
		if marksSensitive(t) {
			return true
		}
		for _, v := range t {
			if anySensitive(v) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(t, anySensitive)
	}
	return false
}

// walkSensitive appends to out the scalars of v that node, or an
// enclosing schema (under), marks sensitive.
func walkSensitive(node map[string]any, v any, under bool, patterns map[string]*regexp.Regexp, out *[]string) {
	under = under || (node != nil && marksSensitive(node))
	if node == nil && !under {
		return
	}
	if node != nil {
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			branches, _ := node[kw].([]any)
			for _, b := range branches {
				if m, ok := b.(map[string]any); ok {
					walkSensitive(m, v, under, patterns, out)
				}
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			for _, sub := range memberSchemas(node, k, patterns) {
				walkSensitive(sub, t[k], under, patterns, out)
			}
			if under && len(memberSchemas(node, k, patterns)) == 0 {
				walkSensitive(nil, t[k], true, patterns, out)
			}
		}
	case []any:
		for i, item := range t {
			walkSensitive(itemSchema(node, i), item, under, patterns, out)
		}
	case nil:
	default:
		if under {
			*out = append(*out, scalarText(t))
		}
	}
}

// memberSchemas returns the schemas of key k of an object node describes:
// its property, else every matching patternProperties schema, else
// additionalProperties.
func memberSchemas(node map[string]any, k string, patterns map[string]*regexp.Regexp) []map[string]any {
	if node == nil {
		return nil
	}
	if props, ok := node["properties"].(map[string]any); ok {
		if p, ok := props[k].(map[string]any); ok {
			return []map[string]any{p}
		}
	}
	var out []map[string]any
	if named, ok := node["patternProperties"].(map[string]any); ok {
		for _, expr := range slices.Sorted(maps.Keys(named)) {
			if re := patterns[expr]; re != nil && re.MatchString(k) {
				if p, ok := named[expr].(map[string]any); ok {
					out = append(out, p)
				}
			}
		}
	}
	if len(out) == 0 {
		if p, ok := node["additionalProperties"].(map[string]any); ok {
			out = append(out, p)
		}
	}
	return out
}

// itemSchema returns the schema of element i of a list node describes.
func itemSchema(node map[string]any, i int) map[string]any {
	if node == nil {
		return nil
	}
	switch items := node["items"].(type) {
	case map[string]any:
		return items
	case []any:
		if i < len(items) {
			m, _ := items[i].(map[string]any)
			return m
		}
	}
	return nil
}

// scalarText writes a scalar as it shows in texts.
func scalarText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}
