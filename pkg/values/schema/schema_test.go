package schema

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/values"
)

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// schemaCases are the directories under testdata/schema: each holds
// config-values.yaml and/or values.yaml, and optionally inputs.yaml.
func schemaCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "schema", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no schema cases: %v", err)
	}
	return dirs
}

func loadCase(t *testing.T, dir string) *Schemas {
	t.Helper()
	s, err := LoadSchemas(filepath.Join(dir, "config-values.yaml"), filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatalf("LoadSchemas(%s): %v", dir, err)
	}
	return s
}

// checkGolden compares got, encoded as indented JSON, with the golden file,
// or rewrites the file under -update.
func checkGolden(t *testing.T, path string, got any) {
	t.Helper()
	raw, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	raw = append(raw, '\n')
	if *update {
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(raw)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestLoadSchemasGolden pins the transformed documents: additionalProperties
// closed at every level, x-extend, x-required-for-helm, $ref, anchors.
func TestLoadSchemasGolden(t *testing.T) {
	for _, dir := range schemaCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s := loadCase(t, dir)
			docs := map[string]any{}
			for _, kind := range []Kind{ConfigSchema, ValuesSchema, HelmSchema} {
				if sc := s.get(kind); sc != nil {
					docs[kind.String()] = sc.doc
				} else {
					docs[kind.String()] = nil
				}
			}
			checkGolden(t, filepath.Join(dir, "schemas.golden.json"), docs)
		})
	}
}

// TestApplyDefaultsGolden pins each input of a case's inputs.yaml defaulted
// by the config and by the values schema.
func TestApplyDefaultsGolden(t *testing.T) {
	for _, dir := range schemaCases(t) {
		raw, err := os.ReadFile(filepath.Join(dir, "inputs.yaml"))
		if os.IsNotExist(err) {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			var inputs map[string]values.Values
			if err := yaml.Unmarshal(raw, &inputs); err != nil {
				t.Fatal(err)
			}
			s := loadCase(t, dir)
			got := map[string]map[string]values.Values{}
			for name, in := range inputs {
				before := in.DeepCopy()
				got[name] = map[string]values.Values{
					"config": s.ApplyDefaults(ConfigSchema, in),
					"values": s.ApplyDefaults(ValuesSchema, in),
				}
				if diff := cmp.Diff(before, in); diff != "" {
					t.Errorf("ApplyDefaults changed input %s (-before +after):\n%s", name, diff)
				}
			}
			checkGolden(t, filepath.Join(dir, "defaults.golden.json"), got)
		})
	}
}

// writeSchemas writes config and values schema files into a temporary
// directory; an empty string writes no file. It returns both paths.
func writeSchemas(t *testing.T, config, vals string) (configPath, valuesPath string) {
	t.Helper()
	dir := t.TempDir()
	configPath = filepath.Join(dir, "config-values.yaml")
	valuesPath = filepath.Join(dir, "values.yaml")
	for path, content := range map[string]string{configPath: config, valuesPath: vals} {
		if content == "" {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return configPath, valuesPath
}

// mustConfigSchema loads a config schema alone.
func mustConfigSchema(t *testing.T, config string) *Schemas {
	t.Helper()
	s, err := LoadSchemas(writeSchemas(t, config, ""))
	if err != nil {
		t.Fatalf("LoadSchemas: %v", err)
	}
	return s
}

func TestLoadSchemasAbsent(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present.yaml")
	if err := os.WriteFile(present, []byte("type: object\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name                   string
		config, values         string
		wantConfig, wantValues bool
		// openValues: the values schema accepts undeclared top-level keys.
		openValues bool
	}{
		{name: "both paths empty"},
		{name: "both files missing", config: missing, values: missing},
		{name: "only values", config: missing, values: present, wantValues: true},
		{name: "only config", config: present, values: "", wantConfig: true, wantValues: true, openValues: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSchemas(tt.config, tt.values)
			if err != nil {
				t.Fatalf("LoadSchemas: %v", err)
			}
			got := []bool{s.Has(ConfigSchema), s.Has(ValuesSchema), s.Has(HelmSchema)}
			want := []bool{tt.wantConfig, tt.wantValues, tt.wantValues}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Has(config, values, helm) (-want +got):\n%s", diff)
			}
			// An absent schema accepts anything; a present one is closed.
			in := values.Values{"a": 1.0}
			if err := s.ValidateConfig("m", in); (err != nil) != tt.wantConfig {
				t.Errorf("ValidateConfig(%v) = %v, want an error: %t", in, err, tt.wantConfig)
			}
			wantValuesErr := tt.wantValues && !tt.openValues
			if err := s.ValidateHelm("m", in); (err != nil) != wantValuesErr {
				t.Errorf("ValidateHelm(%v) = %v, want an error: %t", in, err, wantValuesErr)
			}
		})
	}
}

func TestNilSchemas(t *testing.T) {
	var s *Schemas
	in := values.Values{"a": 1.0}
	if s.Has(ValuesSchema) {
		t.Error("nil Schemas has a values schema")
	}
	if err := s.ValidateHelm("m", in); err != nil {
		t.Errorf("ValidateHelm on nil Schemas: %v", err)
	}
	got := s.ApplyDefaults(ValuesSchema, in)
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("ApplyDefaults on nil Schemas (-want +got):\n%s", diff)
	}
	got["a"] = 2.0
	if in["a"] != 1.0 {
		t.Error("ApplyDefaults result aliases its input")
	}
}

type loadErrorCase struct {
	name           string
	config, values string
	want           string // DIR stands for the schemas' directory; a final "..." matches any rest
}

func loadErrorCases() []loadErrorCase {
	return []loadErrorCase{
		{
			name:   "bad yaml",
			config: "type: object\n  properties: [\n",
			want:   "schema DIR/config-values.yaml: decode yaml: yaml: line 2: mapping values are not allowed in this context",
		},
		{
			name:   "top level list",
			values: "- type: object\n",
			want:   "schema DIR/values.yaml: top level is a list, want a map",
		},
		{
			name:   "unknown type",
			config: "type: object\nproperties:\n  a:\n    type: strng\n",
			want:   `schema DIR/config-values.yaml: properties.a: unknown type "strng"`,
		},
		{
			name:   "bad pattern",
			config: "properties:\n  a:\n    type: string\n    pattern: '(['\n",
			want:   "schema DIR/config-values.yaml: properties.a: pattern: error parsing regexp: missing closing ]: `[`",
		},
		{
			name:   "bad patternProperties",
			values: "patternProperties:\n  '(':\n    type: string\n",
			want:   "schema DIR/values.yaml: top level: patternProperties: error parsing regexp: missing closing ): `(`",
		},
		{
			name:   "schema not a map",
			config: "type: object\nitems: [1]\n",
			want:   "schema DIR/config-values.yaml: items[0]: schema is a number, want a map",
		},
		{
			name:   "wrong keyword type",
			config: "type: object\nrequired: name\n",
			want:   "schema DIR/config-values.yaml: json: ...",
		},
		{
			name:   "x-extend not a map",
			config: "type: object\n",
			values: "x-extend: config-values.yaml\n",
			want:   "schema DIR/values.yaml: x-extend is a string, want a map",
		},
		{
			name:   "recursive ref",
			values: "definitions:\n  node:\n    properties:\n      child:\n        $ref: '#/definitions/node'\nproperties:\n  root:\n    $ref: '#/definitions/node'\n",
			want:   `schema DIR/values.yaml: properties.root.properties.child: recursive $ref "#/definitions/node" is not supported`,
		},
		{
			name:   "remote ref",
			values: "properties:\n  a:\n    $ref: 'other.yaml#/definitions/a'\n",
			want:   `schema DIR/values.yaml: properties.a: $ref "other.yaml#/definitions/a": only refs into the same document ("#/...") are supported`,
		},
		{
			name:   "dangling ref",
			values: "properties:\n  a:\n    $ref: '#/definitions/missing'\n",
			want:   `schema DIR/values.yaml: properties.a: $ref "#/definitions/missing": no such node`,
		},
		{
			name:   "x-required-for-helm not names",
			values: "properties:\n  a:\n    type: object\n    x-required-for-helm: {b: true}\n",
			want:   "schema DIR/values.yaml: properties.a: x-required-for-helm is a map, want a name or a list of names",
		},
	}
}

func TestLoadSchemasErrors(t *testing.T) {
	for _, tt := range loadErrorCases() {
		t.Run(tt.name, func(t *testing.T) {
			cfg, vals := writeSchemas(t, tt.config, tt.values)
			_, err := LoadSchemas(cfg, vals)
			if err == nil {
				t.Fatal("LoadSchemas succeeded, want an error")
			}
			got := strings.ReplaceAll(err.Error(), filepath.Dir(cfg), "DIR")
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok && strings.HasPrefix(got, prefix) {
				return
			}
			if got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestLoadSchemasReadError(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadSchemas(dir, "")
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("LoadSchemas(a directory) = %v, want an error naming it", err)
	}
}

// TestEmptySchemaFile: an empty document is the empty schema, closed like
// every object schema, so it accepts only an empty section.
func TestEmptySchemaFile(t *testing.T) {
	s := mustConfigSchema(t, "# nothing here\n")
	if err := s.ValidateConfig("m", values.Values{}); err != nil {
		t.Errorf("empty section: %v", err)
	}
	err := s.ValidateConfig("m", values.Values{"a": 1.0})
	if err == nil || !strings.Contains(err.Error(), "m.a is not allowed") {
		t.Errorf("section with a key: %v, want m.a is not allowed", err)
	}
}

// TestSchemaYAML12 checks that schema files read words with YAML 1.2 core
// rules too: an enum of on/off and a default off are strings, so a section
// with mode: off validates against type: string.
func TestSchemaYAML12(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config-values.yaml")
	schema := "type: object\nproperties:\n  mode:\n    type: string\n    enum: [on, off]\n    default: off\n"
	if err := os.WriteFile(path, []byte(schema), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSchemas(path, "")
	if err != nil {
		t.Fatalf("LoadSchemas() error = %v", err)
	}
	got := s.ApplyDefaults(ConfigSchema, values.Values{})
	if diff := cmp.Diff(values.Values{"mode": "off"}, got); diff != "" {
		t.Errorf("ApplyDefaults() mismatch (-want +got):\n%s", diff)
	}
	section, err := values.FromYAML([]byte("mode: on\n"))
	if err != nil {
		t.Fatalf("values.FromYAML() error = %v", err)
	}
	if err := s.ValidateConfig("m", section); err != nil {
		t.Errorf("ValidateConfig(mode: on) error = %v", err)
	}
}
