package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		want *Config
	}{
		{
			name: "absent configmap",
			data: nil,
			want: &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}},
		},
		{
			name: "every key kind",
			data: map[string]string{
				"global":             "ha: true\nreplicas: 2\n",
				"certManager":        "issuer:\n  name: le\n",
				"certManagerEnabled": "true",
				"ingressNginx2":      "{}",
				"prometheusEnabled":  "false",
			},
			want: &Config{
				Global: values.Values{"ha": true, "replicas": float64(2)},
				Modules: map[string]values.Values{
					"certManager":   {"issuer": map[string]any{"name": "le"}},
					"ingressNginx2": {},
				},
				Enabled: map[string]bool{"certManager": true, "prometheus": false},
			},
		},
		{
			name: "maintenance keys in the established spellings",
			data: map[string]string{"certManagerMaintenance": "NoResourceReconciliation", "fooMaintenance": " noresourcereconciliation", "barMaintenance": ""},
			want: &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{},
				Maintenance: map[string]bool{"certManager": true, "foo": true}},
		},
		{
			name: "empty, null and comment-only sections are empty maps",
			data: map[string]string{"global": "", "a": "null", "b": "# nothing here\n"},
			want: &Config{
				Global:  values.Values{},
				Modules: map[string]values.Values{"a": {}, "b": {}},
				Enabled: map[string]bool{},
			},
		},
		{
			name: "enabled flag with surrounding whitespace",
			data: map[string]string{"fooEnabled": " false\n"},
			want: &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{"foo": false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.data)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// parseErrorCase is ConfigMap data and, per wrong key in key order, the
// key and text its error must contain.
type parseErrorCase struct {
	name string
	data map[string]string
	want [][2]string
}

func TestParseErrorsInValues(t *testing.T) {
	runParseErrorCases(t, []parseErrorCase{
		{
			name: "bad yaml names the line",
			data: map[string]string{"global": "a: 1\nb: [1, 2\n"},
			want: [][2]string{{"global", "line 2: did not find expected ',' or ']'"}},
		},
		{
			name: "section is a list",
			data: map[string]string{"certManager": "- a\n- b\n"},
			want: [][2]string{{"certManager", "values top level is a list, want a map"}},
		},
		{
			name: "global is a scalar",
			data: map[string]string{"global": "just text"},
			want: [][2]string{{"global", "values top level is a string, want a map"}},
		},
		{
			name: "enabled flag not true or false",
			data: map[string]string{"certManagerEnabled": "yes"},
			want: [][2]string{{"certManagerEnabled", `enabled flag is "yes", want "true" or "false"`}},
		},
		{
			name: "enabled flag empty",
			data: map[string]string{"certManagerEnabled": ""},
			want: [][2]string{{"certManagerEnabled", `enabled flag is "", want "true" or "false"`}},
		},
		{
			name: "all errors reported together, in key order, good keys too",
			data: map[string]string{"zeta": "[", "global": "a: 1", "alphaBeta": "- 1", "betaEnabled": "on"},
			want: [][2]string{
				{"alphaBeta", "want a map"},
				{"betaEnabled", `enabled flag is "on"`},
				{"zeta", "did not find expected node content"},
			},
		},
	})
}

func TestParseErrorsInKeys(t *testing.T) {
	const notModuleKey = `is not a module key: want the camelCase of a kebab-case module name, like "certManager"`
	runParseErrorCases(t, []parseErrorCase{
		{
			name: "kebab-case key",
			data: map[string]string{"cert-manager": "{}"},
			want: [][2]string{{"cert-manager", `"cert-manager" ` + notModuleKey}},
		},
		{
			name: "key that does not round-trip",
			data: map[string]string{"CertManager": "{}"},
			want: [][2]string{{"CertManager", `"CertManager" ` + notModuleKey}},
		},
		{
			name: "enabled flag of an invalid module key",
			data: map[string]string{"cert_managerEnabled": "true"},
			want: [][2]string{{"cert_managerEnabled", `"cert_manager" ` + notModuleKey}},
		},
		{
			name: "global has no enabled flag",
			data: map[string]string{"globalEnabled": "true"},
			want: [][2]string{{"globalEnabled", `"global" ` + notModuleKey}},
		},
		{
			name: "bare Enabled",
			data: map[string]string{"Enabled": "true"},
			want: [][2]string{{"Enabled", `"Enabled" ` + notModuleKey}},
		},
		{
			name: "unknown maintenance mode",
			data: map[string]string{"certManagerMaintenance": "Frozen"},
			want: [][2]string{{"certManagerMaintenance", `maintenance mode is "Frozen", want "NoResourceReconciliation" or empty`}},
		},
	})
}

func runParseErrorCases(t *testing.T, tests []parseErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.data)
			if got != nil {
				t.Errorf("Parse() config = %+v, want nil on error", got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse() error = %v, want one matching ErrInvalid", err)
			}
			keyErrs := keyErrors(err)
			if len(keyErrs) != len(tt.want) {
				t.Fatalf("Parse() error has %d key errors, want %d:\n%v", len(keyErrs), len(tt.want), err)
			}
			for i, w := range tt.want {
				if keyErrs[i].Key != w[0] {
					t.Errorf("key error %d is for %q, want %q", i, keyErrs[i].Key, w[0])
				}
				text := keyErrs[i].Error()
				if !strings.HasPrefix(text, `key "`+w[0]+`": `) || !strings.Contains(text, w[1]) {
					t.Errorf("key error %d = %q, want it to name key %q and contain %q", i, text, w[0], w[1])
				}
			}
		})
	}
}

// keyErrors returns the *KeyErrors joined into err, in order.
func keyErrors(err error) []*KeyError {
	var out []*KeyError
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return out
	}
	for _, e := range joined.Unwrap() {
		var ke *KeyError
		if errors.As(e, &ke) {
			out = append(out, ke)
		}
	}
	return out
}

func TestChecksum(t *testing.T) {
	a, err := Parse(map[string]string{"global": "b: 2\na: 1", "foo": "x: [1, 2]"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(map[string]string{"global": "a: 1.0\nb: 2", "foo": "x:\n- 1\n- 2\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{GlobalKey, "foo", "absent"} {
		if a.Checksum(key) != b.Checksum(key) {
			t.Errorf("Checksum(%q) differs for equal values written differently", key)
		}
	}
	if got, want := a.Checksum("absent"), values.Checksum(values.Values{}); got != want {
		t.Errorf("Checksum of an absent section = %s, want the empty checksum %s", got, want)
	}
	if a.Checksum(GlobalKey) == a.Checksum("foo") {
		t.Error("different sections have the same checksum")
	}
	var empty *Config
	if got, want := empty.Checksum(GlobalKey), values.Checksum(values.Values{}); got != want {
		t.Errorf("nil Config Checksum = %s, want the empty checksum %s", got, want)
	}
}

func TestInvalidKeys(t *testing.T) {
	_, parseErr := Parse(map[string]string{"fooEnabled": "yes", "global": "- a list", "bar": "ok: 1"})
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "nil", err: nil, want: nil},
		{name: "not a key error", err: errors.New("boom"), want: nil},
		{name: "every key of a parse", err: parseErr, want: []string{"fooEnabled", "global"}},
		{name: "wrapped and joined, duplicates once", err: fmt.Errorf("configmap ns/cfg: %w", errors.Join(
			&KeyError{Key: "b", Err: errors.New("x")}, &KeyError{Key: "a", Err: errors.New("y")}, &KeyError{Key: "b", Err: errors.New("z")},
		)), want: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, InvalidKeys(tt.err)); diff != "" {
				t.Errorf("InvalidKeys (-want +got):\n%s", diff)
			}
		})
	}
}
