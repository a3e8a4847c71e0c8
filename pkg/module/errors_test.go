package module

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// appendNameErrors appends the *NameError values in err's tree to out.
// errors.As stops at the first match, so each branch of a joined error is
// searched on its own; a *NameError wraps nothing, so no join hides behind one.
func appendNameErrors(out []NameError, err error) []NameError {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, inner := range joined.Unwrap() {
			out = appendNameErrors(out, inner)
		}
		return out
	}
	var ne *NameError
	if errors.As(err, &ne) {
		out = append(out, *ne)
	}
	return out
}

type errorCase struct {
	name      string
	entries   map[string]node
	dirs      []string
	globalDir string
	wantIn    []string // substrings of the error, $ROOT for the temp root
	wantNames []NameError
}

func TestDiscoverNameErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name: "names that do not round-trip are reported together with suggestions",
			entries: map[string]node{
				"m/010-Cert_Manager": dir(),
				"m/module-2":         dir(),
				"m/ok":               dir(),
			},
			dirs: []string{"m"},
			wantIn: []string{
				`module dir "$ROOT/m/010-Cert_Manager": name "Cert_Manager" is not kebab-case`,
				`rename it to "cert-manager"`,
				`rename it to "module2"`,
			},
			wantNames: []NameError{
				{Dir: "$ROOT/m/010-Cert_Manager", Name: "Cert_Manager", Suggestion: "cert-manager"},
				{Dir: "$ROOT/m/module-2", Name: "module-2", Suggestion: "module2"},
			},
		},
		{
			name:    "reserved name",
			entries: map[string]node{"m/001-global": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`module dir "$ROOT/m/001-global": name "global" is reserved`},
		},
		{
			name:    "order prefix out of range",
			entries: map[string]node{"m/99999999999999999999-a": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`module dir "$ROOT/m/99999999999999999999-a": order prefix`, "out of range"},
		},
		{
			name:   "missing modules dir",
			dirs:   []string{"absent"},
			wantIn: []string{"read modules dir", "$ROOT/absent"},
		},
	})
}

func TestDiscoverCommonValuesErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name:    "invalid common values.yaml",
			entries: map[string]node{"m/values.yaml": file("global: [\n"), "m/a": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`parse values file "$ROOT/m/values.yaml"`},
		},
		{
			name:    "common values.yaml that is not a map",
			entries: map[string]node{"m/values.yaml": file("- a\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`parse values file "$ROOT/m/values.yaml"`},
		},
		{
			name:    "common global section that is not a map",
			entries: map[string]node{"m/values.yaml": file("global: 1\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`values file "$ROOT/m/values.yaml": key "global": want a map, got a number`},
		},
		{
			name:    "common Enabled flag that is not a boolean",
			entries: map[string]node{"m/values.yaml": file("certManagerEnabled: \"true\"\n"), "m/cert-manager": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`module "cert-manager": values file "$ROOT/m/values.yaml": key "certManagerEnabled": want a boolean, got a string`},
		},
	})
}

func TestDiscoverModuleAndGlobalErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name:    "module Enabled flag that is not a boolean",
			entries: map[string]node{"m/a/values.yaml": file("aEnabled: 1\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": values file "$ROOT/m/a/values.yaml": key "aEnabled": want a boolean`},
		},
		{
			name:    "module section that is not a map",
			entries: map[string]node{"m/a/values.yaml": file("a: [1, 2]\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": values file "$ROOT/m/a/values.yaml": key "a": want a map, got a list`},
		},
		{
			name: "invalid module values.yaml, every module reported",
			entries: map[string]node{
				"m/a/values.yaml": file("a: {\n"),
				"m/b/values.yaml": file(":\n  - ]\n"),
			},
			dirs:   []string{"m"},
			wantIn: []string{`module "a": parse values file "$ROOT/m/a/values.yaml"`, `module "b": parse values file "$ROOT/m/b/values.yaml"`},
		},
		{
			name:      "global hooks dir that is a file",
			entries:   map[string]node{"global-hooks": file("")},
			globalDir: "global-hooks",
			wantIn:    []string{`global hooks dir "$ROOT/global-hooks" is not a directory`},
		},
	})
}

func runErrorCases(t *testing.T, tests []errorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, set, _, err := discoverTree(t, tt.entries, Options{ModulesDirs: tt.dirs, GlobalHooksDir: tt.globalDir})
			if err == nil {
				t.Fatalf("Discover succeeded with %d modules, want an error", len(set.Modules()))
			}
			if set != nil && set.Err() == nil {
				t.Errorf("Discover returned a Set with its error")
			}
			msg := strings.ReplaceAll(err.Error(), root, "$ROOT")
			for _, want := range tt.wantIn {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			names := appendNameErrors(nil, err)
			for i := range names {
				names[i].Dir = strings.ReplaceAll(names[i].Dir, root, "$ROOT")
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("name errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
