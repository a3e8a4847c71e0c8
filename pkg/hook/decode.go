package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// ConfigError is one problem in a hook's configuration: which hook (Source),
// where in the configuration (Field, e.g. "kubernetes[1].executeHookOnEvent[0]";
// empty for the document itself) and what is wrong.
type ConfigError struct {
	Source string
	Field  string
	Err    error
}

// Error formats the problem as "hook <source>: <field>: <problem>".
func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("hook %s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("hook %s: %s: %v", e.Source, e.Field, e.Err)
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// decodeTree turns a JSON or YAML document into a tree of map[string]any,
// []any, string, json.Number, bool and nil. A document that looks like JSON
// is decoded as JSON first, so that JSON indented with tabs (invalid YAML) is
// accepted; YAML flow mappings that are not JSON still parse as YAML.
func decodeTree(data []byte) (any, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty configuration")
	}
	if trimmed[0] != '{' {
		converted, err := yaml.YAMLToJSONStrict(trimmed)
		if err != nil {
			return nil, fmt.Errorf("parse yaml: %w", err)
		}
		return decodeJSON(converted)
	}
	tree, err := decodeJSON(trimmed)
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		if converted, yamlErr := yaml.YAMLToJSONStrict(trimmed); yamlErr == nil {
			return decodeJSON(converted)
		}
	}
	return tree, err
}

// decodeJSON decodes exactly one JSON value.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("parse json: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("parse json: unexpected data after the configuration object")
	}
	return tree, nil
}

// parser collects every problem found in one hook's configuration, so that a
// hook author sees all of them at once.
type parser struct {
	source string
	errs   []error
}

func (p *parser) errorf(field, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{Source: p.source, Field: field, Err: fmt.Errorf(format, args...)})
}

func (p *parser) err() error { return errors.Join(p.errs...) }

// object reads the keys of one JSON object; keys never read are reported as
// unknown by done.
type object struct {
	p    *parser
	path string
	m    map[string]any
	read map[string]bool
}

// object returns v as an object at path, or nil after reporting a type error.
func (p *parser) object(path string, v any) *object {
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(path, "want an object, got %s", describe(v))
		return nil
	}
	return &object{p: p, path: path, m: m, read: make(map[string]bool, len(m))}
}

func (o *object) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns the value of key; null counts as absent.
func (o *object) get(key string) (any, bool) {
	o.read[key] = true
	v, ok := o.m[key]
	return v, ok && v != nil
}

func (o *object) has(key string) bool {
	v, ok := o.m[key]
	return ok && v != nil
}

func (o *object) str(key string) string {
	v, ok := o.get(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.p.errorf(o.field(key), "want a string, got %s", describe(v))
	}
	return s
}

func (o *object) boolean(key string, def bool) bool {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		o.p.errorf(o.field(key), "want true or false, got %s", describe(v))
		return def
	}
	return b
}

func (o *object) number(key string) (float64, bool) {
	v, ok := o.get(key)
	if !ok {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		o.p.errorf(o.field(key), "want a number, got %s", describe(v))
		return 0, false
	}
	f, err := n.Float64()
	if err != nil {
		o.p.errorf(o.field(key), "want a number, got %s", describe(v))
		return 0, false
	}
	return f, true
}

func (o *object) integer(key string) (int, bool) {
	v, ok := o.get(key)
	if !ok {
		return 0, false
	}
	n, _ := v.(json.Number)
	i, err := strconv.Atoi(n.String())
	if err != nil {
		o.p.errorf(o.field(key), "want an integer, got %s", describe(v))
		return 0, false
	}
	return i, true
}

// list returns the items of a list; present reports whether key was given
// at all, so that callers can tell an absent list from an empty one.
func (o *object) list(key string) (items []any, present bool) {
	v, ok := o.get(key)
	if !ok {
		return nil, false
	}
	l, ok := v.([]any)
	if !ok {
		o.p.errorf(o.field(key), "want a list, got %s", describe(v))
		return nil, false
	}
	return l, true
}

// stringList returns a list of strings (nil when absent), reporting each
// item that is not a string.
func (o *object) stringList(key string) []string {
	l, present := o.list(key)
	if !present {
		return nil
	}
	items := make([]string, 0, len(l))
	for i, v := range l {
		s, ok := v.(string)
		if !ok {
			o.p.errorf(itemPath(o.field(key), i), "want a string, got %s", describe(v))
			continue
		}
		items = append(items, s)
	}
	return items
}

// child returns the object under key, or nil when it is absent or invalid.
func (o *object) child(key string) *object {
	v, ok := o.get(key)
	if !ok {
		return nil
	}
	return o.p.object(o.field(key), v)
}

// done reports every key that was never read, in sorted order.
func (o *object) done() {
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		if !o.read[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		o.p.errorf(o.path, "unknown field %q", k)
	}
}

// describe names a decoded value for error messages, quoting short scalars.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return "string " + strconv.Quote(v)
	case json.Number:
		return "number " + v.String()
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// itemPath formats the path of a list item, e.g. "kubernetes[1]".
func itemPath(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]"
}

// quoteOrDescribe quotes a string and describes anything else.
func quoteOrDescribe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return describe(v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// quoteList formats names for messages: "a", "b".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
