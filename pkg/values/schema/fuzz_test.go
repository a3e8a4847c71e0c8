package schema

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// FuzzApplyDefaults loads a fuzzed schema (as both the config and the
// values schema, so all three kinds exist) and checks, for fuzzed values,
// that defaulting and validation never panic or change their input, that
// defaulting is idempotent, and that its result shares nothing with the
// input or the schema. Plain `go test` runs only the seeds.
func FuzzApplyDefaults(f *testing.F) {
	for _, seed := range [][2]string{
		{"type: object\nproperties:\n  a:\n    type: integer\n    default: 1\n", `{}`},
		{"properties:\n  o:\n    type: object\n    default: {}\n    properties:\n      x: {default: [1, {y: 2}]}\n", `{"o":{"x":null}}`},
		{"properties:\n  m:\n    patternProperties:\n      '^a':\n        properties:\n          d: {default: {k: v}}\n      'a$':\n        properties:\n          d: {default: 2}\n", `{"m":{"aa":{},"b":{},"a":[]}}`},
		{"properties:\n  l:\n    type: array\n    items:\n      properties:\n        p: {default: true}\n", `{"l":[{},1,null,[{}],{"p":false}]}`},
		{"properties:\n  t:\n    items:\n      - properties: {p: {default: 0}}\n  e:\n    additionalProperties:\n      properties: {q: {default: s}}\n", `{"t":[{},{}],"e":{"k":{},"j":"x"}}`},
		{"x-extend: {schema: config-values.yaml}\nx-required-for-helm: [a]\ndefinitions:\n  d: {default: 3}\nproperties:\n  a: {$ref: '#/definitions/d'}\n", `{"b":{}}`},
		{"a: &x {default: 1}\nproperties: {p: *x, q: {<<: *x, type: string}}\n", `{"p":"s"}`},
		{"", `{"any":[1,"two",{"three":3}]}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, schemaDoc, rawValues []byte) {
		s, err := newSchemas(
			&schemaSource{file: "config-values.yaml", data: schemaDoc},
			&schemaSource{file: "values.yaml", data: schemaDoc},
		)
		if err != nil {
			return
		}
		v, err := values.FromJSON(rawValues)
		if err != nil {
			return
		}
		before := v.DeepCopy()
		for _, kind := range []Kind{ConfigSchema, ValuesSchema, HelmSchema} {
			got := s.ApplyDefaults(kind, v)
			if diff := cmp.Diff(before, v); diff != "" {
				t.Fatalf("ApplyDefaults(%v) changed its input (-before +after):\n%s", kind, diff)
			}
			again := s.ApplyDefaults(kind, got)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Fatalf("ApplyDefaults(%v) is not idempotent (-once +twice):\n%s", kind, diff)
			}
			_ = s.Validate(kind, "m", got)
			if diff := cmp.Diff(again, got); diff != "" {
				t.Fatalf("Validate(%v) changed its input (-before +after):\n%s", kind, diff)
			}
			scribble(got)
			if diff := cmp.Diff(before, v); diff != "" {
				t.Fatalf("ApplyDefaults(%v) result aliases its input (-before +after):\n%s", kind, diff)
			}
			if diff := cmp.Diff(again, s.ApplyDefaults(kind, v)); diff != "" {
				t.Fatalf("ApplyDefaults(%v) result aliases the schema (-before +after writing to a result):\n%s", kind, diff)
			}
		}
	})
}

// scribble writes into every map and list of a tree.
func scribble(v any) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Collect(maps.Keys(t)) {
			scribble(t[k])
			t[k+"~"] = "scribbled"
		}
	case values.Values:
		scribble(map[string]any(t))
	case []any:
		for i, val := range t {
			scribble(val)
			t[i] = []any{"scribbled", val}
		}
	}
}
