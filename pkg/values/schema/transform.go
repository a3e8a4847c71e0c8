package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// keywordSet chooses which subschemas a walk follows.
type keywordSet int

const (
	// structural keywords shape values: transforms that close objects, add
	// helm requirements or set defaults follow only these, the way the
	// established implementation walks a schema.
	structural keywordSet = iota
	// every keyword the validator descends into: ref expansion and checks
	// follow these. Definitions are reached only through refs.
	every
)

func (k keywordSet) keywords() []string {
	kws := []string{"properties", "patternProperties", "additionalProperties", "items"}
	if k == every {
		kws = append(kws, "additionalItems", "allOf", "anyOf", "oneOf", "not", "dependencies")
	}
	return kws
}

// rewriteSubschemas calls fn on every subschema of node found under the
// keyword set, in a stable order, and stores what fn returns in its place.
// path locates node for messages ("" is the document root); fn gets the
// subschema's path. Values of the wrong shape are skipped: decoding the
// document into the validator's types reports them.
func rewriteSubschemas(node map[string]any, set keywordSet, path string, fn func(sub any, path string) (any, error)) error {
	for _, kw := range set.keywords() {
		val, ok := node[kw]
		if !ok {
			continue
		}
		p := joinSchemaPath(path, kw)
		var err error
		switch t := val.(type) {
		case map[string]any:
			if kw == "properties" || kw == "patternProperties" || kw == "dependencies" {
				err = rewriteNamed(t, p, fn)
			} else {
				node[kw], err = fn(t, p)
			}
		case []any:
			if kw == "items" || kw == "allOf" || kw == "anyOf" || kw == "oneOf" {
				for i := range t {
					if t[i], err = fn(t[i], p+"["+strconv.Itoa(i)+"]"); err != nil {
						break
					}
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rewriteNamed rewrites the schemas in a name-to-schema map; entries that
// are not maps (a dependencies list of names) are left alone.
func rewriteNamed(named map[string]any, path string, fn func(sub any, path string) (any, error)) error {
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if _, ok := named[name].(map[string]any); !ok {
			continue
		}
		sub, err := fn(named[name], path+"."+name)
		if err != nil {
			return err
		}
		named[name] = sub
	}
	return nil
}

func joinSchemaPath(path, kw string) string {
	if path == "" {
		return kw
	}
	return path + "." + kw
}

// extend applies the values schema's x-extend to doc, which it owns,
// inheriting from config (read only; what doc inherits is copied).
func extend(doc, config map[string]any) (map[string]any, error) {
	raw, ok := doc["x-extend"]
	if !ok || raw == nil {
		return doc, nil
	}
	settings, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("x-extend is %s, want a map", values.KindOf(raw))
	}
	if name, ok := settings["schema"]; !ok || name == nil {
		return doc, nil
	} else if _, ok := name.(string); !ok {
		return nil, fmt.Errorf("x-extend.schema is %s, want a string", values.KindOf(name))
	}
	for _, kw := range []string{"properties", "patternProperties", "definitions"} {
		merged, err := mergeNamed(config[kw], doc[kw])
		if err != nil {
			return nil, fmt.Errorf("x-extend: %s: %w", kw, err)
		}
		if merged != nil {
			doc[kw] = merged
		}
	}
	if req := unionNames(config["required"], doc["required"]); len(req) > 0 {
		doc["required"] = req
	}
	for _, k := range []string{"title", "description"} {
		if own, _ := doc[k].(string); own == "" && config[k] != nil {
			doc[k] = values.CopyTree(config[k])
		}
	}
	for k, v := range config {
		if _, own := doc[k]; !own && strings.HasPrefix(k, "x-") {
			doc[k] = values.CopyTree(v)
		}
	}
	return doc, nil
}

// mergeNamed merges two name-to-schema maps; own entries win by name. Both
// absent gives nil.
func mergeNamed(inherited, own any) (map[string]any, error) {
	if inherited == nil && own == nil {
		return nil, nil
	}
	out := map[string]any{}
	for _, v := range []any{inherited, own} {
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("is %s, want a map", values.KindOf(v))
		}
		for name, sub := range m {
			out[name] = values.CopyTree(sub)
		}
	}
	return out, nil
}

// unionNames joins two required lists, first list first, without
// repeating a name. Entries that are not strings are kept for the decoder
// to report.
func unionNames(lists ...any) []any {
	var out []any
	seen := map[string]bool{}
	for _, list := range lists {
		items, _ := list.([]any)
		for _, item := range items {
			if name, ok := item.(string); ok {
				if seen[name] {
					continue
				}
				seen[name] = true
			}
			out = append(out, item)
		}
	}
	return out
}

// maxRefExpansions bounds the work refs may cause: refs to refs can grow a
// document exponentially.
const maxRefExpansions = 10000

// expandRefs inlines every local $ref of doc, which it owns and returns.
func expandRefs(doc map[string]any) (map[string]any, error) {
	budget := maxRefExpansions
	out, err := expandNode(doc, doc, nil, "", &budget)
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref at the top level resolves to %s, want a map", values.KindOf(out))
	}
	return m, nil
}

// expandNode replaces node, when it is a $ref, by a copy of its target and
// expands inside it. A node with $ref is replaced whole: its other keywords
// are ignored, as JSON schema draft 4 prescribes. stack holds the refs being
// expanded, to detect recursion.
func expandNode(node any, root map[string]any, stack []string, path string, budget *int) (any, error) {
	m, ok := node.(map[string]any)
	if !ok {
		return node, nil
	}
	raw, isRef := m["$ref"]
	if !isRef {
		err := rewriteSubschemas(m, every, path, func(sub any, p string) (any, error) {
			return expandNode(sub, root, stack, p, budget)
		})
		return m, err
	}
	ref, ok := raw.(string)
	if !ok {
		return nil, fmt.Errorf("%s: $ref is %s, want a string", schemaPathOrRoot(path), values.KindOf(raw))
	}
	if slices.Contains(stack, ref) {
		return nil, fmt.Errorf("%s: recursive $ref %q is not supported", schemaPathOrRoot(path), ref)
	}
	*budget--
	if *budget < 0 {
		return nil, fmt.Errorf("%s: $refs expand to more than %d schemas", schemaPathOrRoot(path), maxRefExpansions)
	}
	target, err := resolveLocalRef(root, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", schemaPathOrRoot(path), err)
	}
	return expandNode(values.CopyTree(target), root, append(slices.Clip(stack), ref), path, budget)
}

// resolveLocalRef finds the node a "#/..." ref points to in root.
func resolveLocalRef(root map[string]any, ref string) (any, error) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: only refs into the same document (\"#/...\") are supported", ref)
	}
	tokens, err := values.ParsePointer(ptr)
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %w", ref, err)
	}
	var node any = root
	for _, tok := range tokens {
		switch t := node.(type) {
		case map[string]any:
			node, ok = t[tok]
		case []any:
			i, convErr := strconv.Atoi(tok)
			ok = convErr == nil && i >= 0 && i < len(t)
			if ok {
				node = t[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("$ref %q: no such node", ref)
		}
	}
	return node, nil
}

func schemaPathOrRoot(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

// closeObjects sets additionalProperties to false on every object schema
// that does not set it, through the structural keywords, in place.
func closeObjects(node map[string]any) {
	if _, set := node["additionalProperties"]; !set && isObjectSchema(node) {
		node["additionalProperties"] = false
	}
	// fn never fails.
	_ = rewriteSubschemas(node, structural, "", func(sub any, _ string) (any, error) {
		if m, ok := sub.(map[string]any); ok {
			closeObjects(m)
		}
		return sub, nil
	})
}

// isObjectSchema reports whether a schema may describe an object that
// closing cannot break: its type is "object", includes it, or is not given,
// and it is not only a composition (allOf, anyOf or oneOf without its own
// properties or patternProperties), whose parts declare the properties.
func isObjectSchema(node map[string]any) bool {
	_, props := node["properties"]
	_, patterns := node["patternProperties"]
	if !props && !patterns {
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			if _, ok := node[kw]; ok {
				return false
			}
		}
	}
	switch t := node["type"].(type) {
	case nil:
		return true
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	default:
		return false
	}
}

// requireForHelm adds each x-required-for-helm (a name or a list of names)
// to required at the same level, through the structural keywords, in place.
func requireForHelm(node map[string]any, path string) error {
	if raw, ok := node["x-required-for-helm"]; ok {
		var names []any
		switch t := raw.(type) {
		case string:
			names = []any{t}
		case []any:
			for _, n := range t {
				if _, ok := n.(string); !ok {
					return fmt.Errorf("%s: x-required-for-helm lists %s, want names", schemaPathOrRoot(path), values.KindOf(n))
				}
			}
			names = t
		default:
			return fmt.Errorf("%s: x-required-for-helm is %s, want a name or a list of names", schemaPathOrRoot(path), values.KindOf(raw))
		}
		if req := unionNames(node["required"], names); len(req) > 0 {
			node["required"] = req
		}
	}
	return rewriteSubschemas(node, structural, path, func(sub any, p string) (any, error) {
		m, ok := sub.(map[string]any)
		if !ok {
			return sub, nil
		}
		return m, requireForHelm(m, p)
	})
}
