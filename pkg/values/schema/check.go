package schema

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// checkSchema rejects what the validator would misread or panic on: a $ref
// left in place, an unknown type name, a regular expression that does not
// compile. It records every patternProperties expression, compiled, in
// patterns for defaulting.
func checkSchema(node map[string]any, path string, patterns map[string]*regexp.Regexp) error {
	at := schemaPathOrRoot(path)
	if _, ok := node["$ref"]; ok {
		return fmt.Errorf("%s: $ref was not expanded", at)
	}
	if err := checkType(node["type"]); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	if raw, ok := node["pattern"]; ok {
		expr, isString := raw.(string)
		if !isString {
			return fmt.Errorf("%s: pattern is %s, want a string", at, values.KindOf(raw))
		}
		if _, err := regexp.Compile(expr); err != nil {
			return fmt.Errorf("%s: pattern: %w", at, err)
		}
	}
	if named, ok := node["patternProperties"].(map[string]any); ok {
		for _, expr := range slices.Sorted(maps.Keys(named)) {
			re, err := regexp.Compile(expr)
			if err != nil {
				return fmt.Errorf("%s: patternProperties: %w", at, err)
			}
			patterns[expr] = re
		}
	}
	return rewriteSubschemas(node, every, path, func(sub any, p string) (any, error) {
		m, ok := sub.(map[string]any)
		if !ok {
			return sub, fmt.Errorf("%s: schema is %s, want a map", p, values.KindOf(sub))
		}
		return m, checkSchema(m, p, patterns)
	})
}

// checkType accepts a JSON schema type name or a list of them.
func checkType(raw any) error {
	var names []any
	switch t := raw.(type) {
	case nil:
		return nil
	case string:
		names = []any{t}
	case []any:
		names = t
	default:
		return fmt.Errorf("type is %s, want a name or a list of names", values.KindOf(raw))
	}
	for _, n := range names {
		name, ok := n.(string)
		if !ok {
			return fmt.Errorf("type lists %s, want names", values.KindOf(n))
		}
		switch name {
		case "object", "array", "string", "integer", "number", "boolean", "null":
		default:
			return fmt.Errorf("unknown type %q", name)
		}
	}
	return nil
}
