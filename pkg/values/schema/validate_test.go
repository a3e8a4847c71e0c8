package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

const validateConfigSchema = `
type: object
required: [issuer]
properties:
  replicas:
    type: integer
  mode:
    type: string
    enum: [a, b]
  issuer:
    type: object
    required: [name]
    properties:
      name:
        type: string
  hosts:
    type: array
    items:
      type: object
      properties:
        name:
          type: string
          pattern: '^[a-z.]+$'
  byName:
    type: object
    patternProperties:
      '^[a-z]+$':
        type: integer
        minimum: 1
  free:
    type: object
    additionalProperties: true
  short:
    type: string
    maxLength: 3
  nullable:
    type: string
    nullable: true
`

type validateCase struct {
	name    string
	section string // YAML
	want    []Violation
}

func validateConfigCases() []validateCase {
	return []validateCase{
		{
			name: "valid",
			section: `{replicas: 2, mode: a, issuer: {name: x}, hosts: [{name: a.b}], byName: {one: 1},
				free: {any: {deep: [1]}}, short: abc, nullable: null}`,
		},
		{
			name:    "missing required nested",
			section: `{issuer: {}}`,
			want:    []Violation{{"certManager.issuer.name", "is required"}},
		},
		{
			name:    "missing required top",
			section: `{}`,
			want:    []Violation{{"certManager.issuer", "is required"}},
		},
		{
			name:    "wrong type",
			section: `{issuer: {name: 5}, replicas: two}`,
			want: []Violation{
				{"certManager.issuer.name", "must be of type string, got number"},
				{"certManager.replicas", "must be of type integer, got string"},
			},
		},
		{
			name:    "integer from yaml is a whole float64",
			section: `{issuer: {name: x}, replicas: 2.0}`,
		},
		{
			name:    "fraction is not an integer",
			section: `{issuer: {name: x}, replicas: 2.5}`,
			want:    []Violation{{"certManager.replicas", "must be of type integer, got number"}},
		},
		{
			name:    "null without nullable",
			section: `{issuer: {name: x}, replicas: null}`,
			want:    []Violation{{"certManager.replicas", "must be of type integer, got null"}},
		},
		{
			name:    "enum",
			section: `{issuer: {name: x}, mode: c}`,
			want:    []Violation{{"certManager.mode", "must be one of [a b]"}},
		},
		{
			name:    "additional property at the top",
			section: `{issuer: {name: x}, extra: 1}`,
			want:    []Violation{{"certManager.extra", "is not allowed (additionalProperties is false)"}},
		},
		{
			name:    "additional property nested",
			section: `{issuer: {name: x, kind: y}}`,
			want:    []Violation{{"certManager.issuer.kind", "is not allowed (additionalProperties is false)"}},
		},
		{
			name:    "array items",
			section: `{issuer: {name: x}, hosts: [{name: ok}, {name: BAD}, {port: 1}]}`,
			want: []Violation{
				{"certManager.hosts[1].name", "must match '^[a-z.]+$'"},
				{"certManager.hosts[2].port", "is not allowed (additionalProperties is false)"},
			},
		},
		{
			name:    "patternProperties",
			section: `{issuer: {name: x}, byName: {good: 0, Bad: 1}}`,
			want: []Violation{
				{"certManager.byName.Bad", "is not allowed (additionalProperties is false)"},
				{"certManager.byName.good", "must be greater than or equal to 1"},
			},
		},
		{
			name:    "limits",
			section: `{issuer: {name: x}, short: abcd}`,
			want:    []Violation{{"certManager.short", "must be at most 3 chars long"}},
		},
	}
}

func TestValidateConfig(t *testing.T) {
	s := mustConfigSchema(t, validateConfigSchema)
	for _, tt := range validateConfigCases() {
		t.Run(tt.name, func(t *testing.T) {
			section, err := values.FromYAML([]byte(tt.section))
			if err != nil {
				t.Fatal(err)
			}
			before := section.DeepCopy()
			err = s.ValidateConfig("certManager", section)
			if diff := cmp.Diff(before, section); diff != "" {
				t.Errorf("ValidateConfig changed its input:\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, violations(t, err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// violations unpacks a *ValidationError; nil for a nil error.
func violations(t *testing.T, err error) []Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	return verr.Violations
}

func TestValidationErrorMessage(t *testing.T) {
	cfg, _ := writeSchemas(t, validateConfigSchema, "")
	s, err := LoadSchemas(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	err = s.ValidateConfig("certManager", values.Values{"mode": "c", "extra": true})
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("ValidateConfig = %v, want a *ValidationError", err)
	}
	if verr.Kind != ConfigSchema || verr.File != cfg {
		t.Errorf("Kind, File = %v, %q; want config values, %q", verr.Kind, verr.File, cfg)
	}
	want := "config values do not match schema " + cfg + ": " +
		"certManager.extra is not allowed (additionalProperties is false); " +
		"certManager.issuer is required; " +
		"certManager.mode must be one of [a b]"
	if got := err.Error(); got != want {
		t.Errorf("Error()\n got: %s\nwant: %s", got, want)
	}
}

func TestValidateValuesAndHelm(t *testing.T) {
	dir := filepath.Join("testdata", "schema")
	tests := []struct {
		name               string
		dir                string
		section            string
		wantValues, wantHM []Violation
	}{
		{
			name:    "x-required-for-helm only at helm time",
			dir:     "helm",
			section: `{list: [{}]}`,
			wantHM: []Violation{
				{"m.internal", "is required"},
				{"m.list[0].name", "is required"},
			},
		},
		{
			name:    "nested x-required-for-helm",
			dir:     "helm",
			section: `{internal: {}}`,
			wantValues: []Violation{
				{"m.internal.ca", "is required"},
			},
			wantHM: []Violation{
				{"m.internal.ca", "is required"},
				{"m.internal.token", "is required"},
			},
		},
		{
			name:    "x-extend inherits properties, patterns and required",
			dir:     "extend",
			section: `{replicas: 1, mode: c, internal: {port: 1, flag: true}, extraThing: s}`,
		},
		{
			name:    "x-extend: own property replaces inherited one",
			dir:     "extend",
			section: `{mode: d, internal: {port: 0, flag: s}}`,
			wantValues: []Violation{
				{"m.internal.flag", "must be of type boolean, got string"},
				{"m.internal.port", "must be greater than or equal to 1"},
				{"m.mode", "must be one of [a b c]"},
				{"m.replicas", "is required"},
			},
		},
		{
			name:    "explicit additionalProperties true at the top",
			dir:     "closed",
			section: `{anything: 1, internal: {}}`,
		},
		{
			name:       "closed below explicit additionalProperties true",
			dir:        "closed",
			section:    `{internal: {x: 1}}`,
			wantValues: []Violation{{"m.internal.x", "is not allowed (additionalProperties is false)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := loadCase(t, filepath.Join(dir, tt.dir))
			section, err := values.FromYAML([]byte(tt.section))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantValues, violations(t, s.ValidateValues("m", section))); diff != "" {
				t.Errorf("ValidateValues (-want +got):\n%s", diff)
			}
			wantHelm := tt.wantHM
			if wantHelm == nil {
				wantHelm = tt.wantValues
			}
			if diff := cmp.Diff(wantHelm, violations(t, s.ValidateHelm("m", section))); diff != "" {
				t.Errorf("ValidateHelm (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClosedSchema checks every level of the closed case: extra keys are
// rejected wherever additionalProperties was not given.
func TestClosedSchema(t *testing.T) {
	s := loadCase(t, filepath.Join("testdata", "schema", "closed"))
	section, err := values.FromYAML([]byte(`
name: nm
tls: {issuer: {kind: k, x: 1}, x: 1}
labels: {l: {value: v, x: 1}}
free: {anything: 1, nested: {a: a, x: 1}}
hosts: [{host: h, x: 1}]
byName: {abc: {port: 1, x: 1}}
either: {x: s}
constrained: {a: s, x: 1}
tuple: [{x: 1}, s]
anything: {x: 1}
nullableObject: {x: 1}
x: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	notAllowed := "is not allowed (additionalProperties is false)"
	want := []Violation{
		{"m.anything.x", notAllowed},
		{"m.byName.abc.x", notAllowed},
		{"m.constrained.x", notAllowed},
		{"m.free.nested.x", notAllowed},
		{"m.hosts[0].x", notAllowed},
		{"m.labels.l.x", notAllowed},
		{"m.nullableObject.x", notAllowed},
		{"m.tls.issuer.x", notAllowed},
		{"m.tls.x", notAllowed},
		{"m.tuple[0].x", notAllowed},
		{"m.x", notAllowed},
	}
	if diff := cmp.Diff(want, violations(t, s.ValidateConfig("m", section))); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestValidateUnencodable(t *testing.T) {
	s := mustConfigSchema(t, "type: object\nadditionalProperties: true\n")
	err := s.ValidateConfig("m", values.Values{"c": make(chan int)})
	if err == nil || !strings.HasPrefix(err.Error(), "validate config values: encode values:") {
		t.Errorf("ValidateConfig(a channel) = %v, want an encode error", err)
	}
}

// TestSchemasConcurrentUse lets the race detector watch concurrent
// defaulting and validation with one Schemas.
func TestSchemasConcurrentUse(t *testing.T) {
	s := loadCase(t, filepath.Join("testdata", "schema", "defaults"))
	section := values.Values{"nodeGroups": map[string]any{"a": map[string]any{}}, "hosts": []any{map[string]any{}}}
	want := s.ApplyDefaults(ValuesSchema, section)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got := s.ApplyDefaults(ValuesSchema, section)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("concurrent ApplyDefaults differs:\n%s", diff)
			}
			if err := s.ValidateValues("m", got); err != nil {
				t.Errorf("ValidateValues(defaulted): %v", err)
			}
		})
	}
	wg.Wait()
}

// TestValidateOtherRules pins the wording of the rules beyond the common
// four: number formats and limits, list limits, compositions.
func TestValidateOtherRules(t *testing.T) {
	s := mustConfigSchema(t, `
type: object
properties:
  port:
    type: integer
    format: int32
  multi:
    type: number
    multipleOf: 2
  uniq:
    type: array
    uniqueItems: true
    minItems: 3
  either:
    oneOf:
      - type: string
      - type: integer
  all:
    allOf:
      - type: object
        required: [a]
      - type: object
        required: [b]
`)
	tests := []validateCase{
		{
			name:    "int32 range",
			section: `{port: 3000000000}`,
			want:    []Violation{{"m.port", "must be of type integer with format int32"}},
		},
		{
			name:    "multipleOf",
			section: `{multi: 3}`,
			want:    []Violation{{"m.multi", "must be a multiple of 2"}},
		},
		{
			name:    "list limits",
			section: `{uniq: [1, 1]}`,
			want: []Violation{
				{"m.uniq", "must have at least 3 items"},
				{"m.uniq", "must not contain duplicates"},
			},
		},
		{
			name:    "oneOf",
			section: `{either: 1.5}`,
			want: []Violation{
				{"m.either", "must be of type string, got number"},
				{"m.either", "must validate one and only one schema (oneOf). Found none valid"},
			},
		},
		{
			name:    "allOf",
			section: `{all: {}}`,
			want: []Violation{
				{"m.all", "must validate all the schemas (allOf). None validated"},
				{"m.all.a", "is required"},
				{"m.all.b", "is required"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			section, err := values.FromYAML([]byte(tt.section))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, violations(t, s.ValidateConfig("m", section))); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// A section with only a config schema has its hooks' values checked
// against every rule the config schema declares, with the top level open
// to the hooks' own keys.
func TestValidateValuesOnlyConfigSchema(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config-values.yaml")
	doc := "type: object\nx-required-for-helm: [replicas]\nproperties:\n  replicas: {type: integer, default: 1}\n  tls:\n    type: object\n    properties:\n      enabled: {type: boolean}\n"
	if err := os.WriteFile(config, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchemas(config, filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		section   values.Values
		wantErr   string
		wantHelm  string
		checkHelm bool
	}{
		{name: "declared keys and a hook's own", section: values.Values{"replicas": 2.0, "internal": values.Values{"token": "x"}}},
		{name: "wrong type", section: values.Values{"replicas": "many"}, wantErr: "m.replicas must be of type integer"},
		{name: "nested objects stay closed", section: values.Values{"tls": values.Values{"enbled": true}}, wantErr: "m.tls.enbled is not allowed"},
		{name: "required for helm", section: values.Values{}, checkHelm: true, wantHelm: "m.replicas is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ValidateValues("m", tt.section)
			if got := errString(err); !strings.Contains(got, tt.wantErr) || (tt.wantErr == "") != (err == nil) {
				t.Errorf("ValidateValues = %q, want %q", got, tt.wantErr)
			}
			if tt.checkHelm {
				if got := errString(s.ValidateHelm("m", tt.section)); !strings.Contains(got, tt.wantHelm) || got == "" {
					t.Errorf("ValidateHelm = %q, want %q", got, tt.wantHelm)
				}
			}
		})
	}
	// Defaults of the config schema are not applied a second time above
	// the config values.
	if got := s.ApplyDefaults(ValuesSchema, values.Values{}); len(got) != 0 {
		t.Errorf("ApplyDefaults(values) = %v, want no defaults", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
