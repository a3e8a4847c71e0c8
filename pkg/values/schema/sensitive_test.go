package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestSensitive(t *testing.T) {
	tests := []struct {
		name   string
		config string
		values string // the values schema, "" for none
		kind   Kind
		in     string
		want   []string
	}{
		{
			name:   "x-sensitive",
			config: "properties:\n  password: {type: string, x-sensitive: true}\n  user: {type: string}\n",
			kind:   ConfigSchema,
			in:     `{"password":"hunter22","user":"bob"}`,
			want:   []string{"hunter22"},
		},
		{
			name:   "writeOnly, format password and x-sensitive-data",
			config: "properties:\n  a: {type: string, writeOnly: true}\n  b: {type: string, format: password}\n  c: {type: string, x-sensitive-data: {mask: full}}\n  d: {type: string, x-sensitive-data: false}\n",
			kind:   ConfigSchema,
			in:     `{"a":"aaaa","b":"bbbb","c":"cccc","d":"dddd"}`,
			want:   []string{"aaaa", "bbbb", "cccc"},
		},
		{
			name:   "everything under a sensitive object",
			config: "properties:\n  creds:\n    type: object\n    x-sensitive: true\n    properties:\n      key: {type: string}\n      port: {type: integer}\n      list: {type: array, items: {type: string}}\n",
			kind:   ConfigSchema,
			in:     `{"creds":{"key":"k-1","port":5432,"list":["x","y"]}}`,
			want:   []string{"5432", "k-1", "x", "y"},
		},
		{
			name:   "items, patternProperties and additionalProperties",
			config: "properties:\n  users:\n    type: array\n    items:\n      type: object\n      properties:\n        name: {type: string}\n        token: {type: string, x-sensitive: true}\n  byPattern:\n    type: object\n    patternProperties:\n      '^tok-': {type: string, x-sensitive: true}\n    additionalProperties: {type: string}\n  byAdditional:\n    type: object\n    additionalProperties: {type: string, format: password}\n",
			kind:   ConfigSchema,
			in:     `{"users":[{"name":"ann","token":"t-ann"},{"name":"bob","token":"t-bob"}],"byPattern":{"tok-a":"pat-a","plain":"open"},"byAdditional":{"x":"add-x"}}`,
			want:   []string{"add-x", "pat-a", "t-ann", "t-bob"},
		},
		{
			name:   "allOf branches",
			config: "properties:\n  a:\n    allOf:\n      - {type: string}\n      - {x-sensitive: true}\n",
			kind:   ConfigSchema,
			in:     `{"a":"in-all-of"}`,
			want:   []string{"in-all-of"},
		},
		{
			name:   "values schema extends the config schema",
			config: "properties:\n  password: {type: string, x-sensitive: true}\n",
			values: "x-extend: {schema: config-values.yaml}\nproperties:\n  internal:\n    type: object\n    properties:\n      token: {type: string, writeOnly: true}\n",
			kind:   ValuesSchema,
			in:     `{"password":"from-config","internal":{"token":"from-hook"}}`,
			want:   []string{"from-config", "from-hook"},
		},
		{
			name:   "no marker",
			config: "properties:\n  password: {type: string}\n",
			kind:   ConfigSchema,
			in:     `{"password":"plain"}`,
			want:   nil,
		},
		{
			name:   "absent schema kind",
			config: "properties:\n  password: {type: string, x-sensitive: true}\n",
			kind:   HelmSchema,
			in:     `{"password":"from-config"}`,
			want:   []string{"from-config"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSchemas(writeSchemas(t, tt.config, tt.values))
			if err != nil {
				t.Fatalf("LoadSchemas: %v", err)
			}
			in, err := values.FromJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Sensitive(tt.kind, in)); diff != "" {
				t.Errorf("Sensitive (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSensitiveNil(t *testing.T) {
	var s *Schemas
	if got := s.Sensitive(ValuesSchema, values.Values{"a": "b"}); got != nil {
		t.Errorf("nil schemas: %v", got)
	}
}
