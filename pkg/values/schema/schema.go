package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/cel"
)

// Kind names one of the three schemas of a section (a module or
// global).
type Kind int

const (
	// ConfigSchema is openapi/config-values.yaml: it validates config values
	// (the user's ConfigMap section merged with this schema's defaults).
	ConfigSchema Kind = iota
	// ValuesSchema is openapi/values.yaml after x-extend: it validates
	// effective values (every layer, hook patches included).
	ValuesSchema
	// HelmSchema is ValuesSchema with every x-required-for-helm list added to
	// required; it validates effective values right before a Helm run.
	HelmSchema
)

// String names the values a schema kind validates, for messages.
func (k Kind) String() string {
	switch k {
	case ConfigSchema:
		return "config values"
	case ValuesSchema:
		return "values"
	case HelmSchema:
		return "helm values"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// Schemas holds the OpenAPI schemas of one section, ready to default and
// validate values. It is immutable once loaded and safe for concurrent use.
// A nil *Schemas, like a missing schema, means no defaults and no
// validation.
type Schemas struct {
	config, values, helm *schema
}

// schema is one transformed schema document.
type schema struct {
	file     string         // the file it came from, for messages
	doc      map[string]any // the transformed document, as JSON decodes it
	spec     *spec.Schema   // doc for the validator
	defaults *defaultsNode  // nil when the schema sets no defaults
	// patterns holds every patternProperties expression, compiled;
	// hasSensitive is set when some node marks values sensitive.
	patterns     map[string]*regexp.Regexp
	hasSensitive bool
	// rules are the CEL rules of x-deckhouse-validations and
	// x-kubernetes-validations; nil when there are none.
	rules *cel.Rules
}

// LoadSchemas reads a section's config-values and values schemas, OpenAPI v3
// schema documents in YAML (anchors and merge keys allowed) whose top level
// is the section's object schema. A path that is empty or names a missing
// file means that schema is absent; an empty file is the empty schema.
//
// The documents are transformed the way the established implementation does
// it, so existing modules keep their meaning:
//
//   - x-extend (any value with a schema name) in the values schema makes it
//     inherit properties, patternProperties and definitions (its own entries
//     win by name), required (union), title and description (when its own are
//     empty) and every top-level x-* key from the config schema. Without a
//     config schema x-extend does nothing.
//   - Local $refs ("#/definitions/name", or any "#/..." pointer into the same
//     document, after x-extend) are inlined; other and recursive refs are
//     errors.
//   - additionalProperties, where not given, becomes false on every object
//     schema (type object or no type) reached through properties,
//     patternProperties, additionalProperties and items, however deep, also
//     under an explicit additionalProperties: true. allOf, anyOf, oneOf and
//     not are left as written, and so is a schema that is only such a
//     composition (no properties or patternProperties of its own): closing
//     it would reject the properties its parts declare.
//   - A section with a config schema and no values schema gets a values
//     schema all the same: the config schema with its top level open to
//     undeclared keys (see openTop), so hooks' values patches are checked
//     against every rule the section declares.
//   - The helm schema is the transformed values schema with each
//     x-required-for-helm (a name or a list of names) added to required at
//     the same level, through the same keywords.
//
// Types must be known JSON schema types and regular expressions must
// compile. Every error names the file it is about.
func LoadSchemas(configValuesPath, valuesPath string) (*Schemas, error) {
	config, err := readSchemaFile(configValuesPath)
	if err != nil {
		return nil, err
	}
	vals, err := readSchemaFile(valuesPath)
	if err != nil {
		return nil, err
	}
	return newSchemas(config, vals)
}

// schemaSource is a schema file's name and content; nil means absent.
type schemaSource struct {
	file string
	data []byte
}

func readSchemaFile(path string) (*schemaSource, error) {
	if path == "" {
		return nil, nil
	}
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	return &schemaSource{file: path, data: data}, nil
}

// newSchemas parses and transforms the sources; either may be nil.
func newSchemas(config, vals *schemaSource) (*Schemas, error) {
	s := &Schemas{}
	var configDoc map[string]any
	if config != nil {
		doc, err := decodeSchema(config.data)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", config.file, err)
		}
		configDoc = values.CopyTree(doc).(map[string]any)
		if s.config, err = buildSchema(config.file, doc); err != nil {
			return nil, err
		}
	}
	var (
		file string
		doc  map[string]any
	)
	switch {
	case vals != nil:
		var err error
		file = vals.file
		if doc, err = decodeSchema(vals.data); err != nil {
			return nil, fmt.Errorf("schema %s: %w", file, err)
		}
		if configDoc != nil {
			if doc, err = extend(doc, configDoc); err != nil {
				return nil, fmt.Errorf("schema %s: %w", file, err)
			}
		}
	case configDoc != nil:
		file, doc = config.file, openTop(configDoc)
	default:
		return s, nil
	}
	var err error
	if s.values, err = buildSchema(file, doc); err != nil {
		return nil, err
	}
	helmDoc := values.CopyTree(s.values.doc).(map[string]any)
	if err := requireForHelm(helmDoc, ""); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	if s.helm, err = newSchema(file, helmDoc); err != nil {
		return nil, err
	}
	if vals == nil {
		// The config schema's defaults are already applied below the
		// config values; applying them again above would refill keys a
		// user's ConfigMap deleted with null.
		s.values.defaults, s.helm.defaults = nil, nil
	}
	return s, nil
}

// openTop derives the values schema of a section that has only a config
// schema: every key the config schema declares keeps its rules, so a hook
// cannot patch a value into a shape the chart was never promised, while
// keys it does not declare (a hook's internal values) stay allowed at the
// top level unless the config schema says otherwise. doc is not changed.
func openTop(doc map[string]any) map[string]any {
	out := values.CopyTree(doc).(map[string]any)
	if _, ok := out["additionalProperties"]; !ok {
		out["additionalProperties"] = true
	}
	return out
}

// decodeSchema reads a YAML (1.2 core rules, see decodeYAML) or JSON schema
// document; empty or null is {}.
func decodeSchema(data []byte) (map[string]any, error) {
	tree, err := values.DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("decode yaml: %w", err)
	}
	switch t := tree.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return t, nil
	default:
		return nil, fmt.Errorf("top level is %s, want a map", values.KindOf(t))
	}
}

// buildSchema inlines refs, closes objects and compiles doc, which it owns.
func buildSchema(file string, doc map[string]any) (*schema, error) {
	expanded, err := expandRefs(doc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	closeObjects(expanded)
	return newSchema(file, expanded)
}

// newSchema checks a transformed document and compiles it.
func newSchema(file string, doc map[string]any) (*schema, error) {
	patterns := map[string]*regexp.Regexp{}
	if err := checkSchema(doc, "", patterns); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: encode: %w", file, err)
	}
	sp := new(spec.Schema)
	if err := json.Unmarshal(raw, sp); err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	rules, err := cel.Compile(doc, func(node map[string]any) bool { return anySensitive(node) })
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", file, err)
	}
	return &schema{file: file, doc: doc, spec: sp, defaults: newDefaultsNode(doc, patterns), patterns: patterns, hasSensitive: anySensitive(doc), rules: rules}, nil
}

// get returns the schema of a kind, or nil when it is absent.
func (s *Schemas) get(kind Kind) *schema {
	if s == nil {
		return nil
	}
	switch kind {
	case ConfigSchema:
		return s.config
	case ValuesSchema:
		return s.values
	case HelmSchema:
		return s.helm
	default:
		return nil
	}
}

// Has reports whether the schema of a kind was loaded. The values and helm
// schemas are present when either file is.
func (s *Schemas) Has(kind Kind) bool {
	return s.get(kind) != nil
}
