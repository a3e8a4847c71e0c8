package schema

import (
	"maps"
	"regexp"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// ApplyDefaults returns a copy of section, the content of one section's key
// (module values without the module key), with the defaults of the schema
// of the given kind filled in. section is never changed and the result
// shares nothing with it or with the schema. Without that schema the result
// is a plain copy; HelmSchema has the defaults of ValuesSchema.
//
// Defaults fill gaps and never override: a default is used only where its
// key is missing (a key holding null counts as present, and a default of
// null is no default). Walking the values and the schema together:
//
//   - a missing property with a default gets a copy of it;
//   - a map value is defaulted by its property's schema; a key that is not a
//     property is defaulted by every patternProperties schema whose pattern
//     matches it (in pattern order), or else by an additionalProperties
//     schema (the established implementation defaults neither);
//   - every element of a list is defaulted by the items schema (by position
//     when items is a list of schemas);
//   - a default just filled in is itself defaulted, so an object with
//     `default: {}` gets its properties' defaults, while an object without a
//     default of its own is never created for the defaults inside it. This
//     matches the established implementation and Kubernetes CRD defaulting.
//
// Defaults are not validated: a default that breaks its schema shows up
// when the defaulted values are validated.
func (s *Schemas) ApplyDefaults(kind Kind, section values.Values) values.Values {
	out := section.DeepCopy()
	if sc := s.get(kind); sc != nil && sc.defaults != nil {
		sc.defaults.apply(map[string]any(out))
	}
	return out
}

// defaultsNode is the part of a schema that sets defaults, compiled. A nil
// node sets nothing.
type defaultsNode struct {
	def        any // a JSON tree; nil when the schema has no default
	properties map[string]*defaultsNode
	patterns   []patternDefaults // every patternProperties entry, by pattern
	additional *defaultsNode     // an additionalProperties schema
	items      *defaultsNode     // items as one schema
	tuple      []*defaultsNode   // items as a list of schemas
}

type patternDefaults struct {
	re   *regexp.Regexp
	node *defaultsNode
}

// newDefaultsNode compiles the defaults of schema node, or returns nil when
// neither it nor anything under it has a default. patterns holds every
// patternProperties expression of the schema, compiled.
func newDefaultsNode(node map[string]any, patterns map[string]*regexp.Regexp) *defaultsNode {
	n := &defaultsNode{def: node["default"]}
	useful := n.def != nil
	sub := func(raw any) *defaultsNode {
		m, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		d := newDefaultsNode(m, patterns)
		useful = useful || d != nil
		return d
	}
	if props, ok := node["properties"].(map[string]any); ok {
		// Every property is kept, a nil node too: being a property is what
		// keeps a key from patternProperties and additionalProperties.
		n.properties = make(map[string]*defaultsNode, len(props))
		for name, raw := range props {
			n.properties[name] = sub(raw)
		}
	}
	if named, ok := node["patternProperties"].(map[string]any); ok {
		for _, expr := range slices.Sorted(maps.Keys(named)) {
			if re := patterns[expr]; re != nil {
				n.patterns = append(n.patterns, patternDefaults{re: re, node: sub(named[expr])})
			}
		}
	}
	n.additional = sub(node["additionalProperties"])
	switch items := node["items"].(type) {
	case map[string]any:
		n.items = sub(items)
	case []any:
		n.tuple = make([]*defaultsNode, len(items))
		for i, raw := range items {
			n.tuple[i] = sub(raw)
		}
	}
	if !useful {
		return nil
	}
	return n
}

// apply fills in defaults in v, a tree this package owns, in place where v
// is a map or a list, and returns v.
func (n *defaultsNode) apply(v any) any {
	if n == nil {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		for name, prop := range n.properties {
			if _, present := t[name]; !present && prop != nil && prop.def != nil {
				t[name] = values.CopyTree(prop.def)
			}
		}
		for k, val := range t {
			t[k] = n.applyMember(k, val)
		}
	case []any:
		for i := range t {
			if n.tuple != nil {
				if i < len(n.tuple) {
					t[i] = n.tuple[i].apply(t[i])
				}
				continue
			}
			t[i] = n.items.apply(t[i])
		}
	}
	return v
}

// applyMember defaults the value of key k of a map n describes.
func (n *defaultsNode) applyMember(k string, val any) any {
	if prop, ok := n.properties[k]; ok {
		return prop.apply(val)
	}
	matched := false
	for _, p := range n.patterns {
		if p.re.MatchString(k) {
			matched = true
			val = p.node.apply(val)
		}
	}
	if !matched {
		val = n.additional.apply(val)
	}
	return val
}
