package importgraph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the repository's root, from this package's directory.
var root = filepath.Join("..", "..") //nolint:gochecknoglobals // a constant path the tests share

// TestRepository checks the repository's import graph against the rules of
// docs/architecture.md: each violation names the importer, the imported
// package and the rule.
func TestRepository(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	layers, err := ParseLayers(page)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := List(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pkgs {
		if _, ok := layers.Row(p.Path); ok {
			checked++
		}
	}
	// Guards against a page or go list output the parser misreads, which
	// would check nothing and pass.
	if checked < 30 {
		t.Fatalf("only %d of %d packages are in the table; is the page's table still under ## Packages?", checked, len(pkgs))
	}
	for _, v := range Check(layers, pkgs) {
		t.Error(v)
	}
}

const page = "# Architecture\n\n## Packages\n\n" +
	"| package | owns | imports from the project |\n" +
	"| --- | --- | --- |\n" +
	"| `cmd/addon-operator` | the commands | most |\n" +
	"| `pkg/operator` | startup | kube |\n" +
	"| `pkg/server` | the listener | kube |\n" +
	"| `pkg/hook`, `pkg/hook/operation` | hooks | kube |\n" +
	"| `pkg/kube` | the shared ground | - |\n" +
	"\n## Who owns which state\n\n" +
	"| state | owner (writer) | readers |\n" +
	"| --- | --- | --- |\n" +
	"| `pkg/misread` | nobody | - |\n"

func TestParseLayers(t *testing.T) {
	got, err := ParseLayers([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := Layers{"cmd/addon-operator": 0, "pkg/operator": 1, "pkg/server": 2, "pkg/hook": 3, "pkg/hook/operation": 3, "pkg/kube": 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	if _, err := ParseLayers([]byte(strings.ReplaceAll(page, "## Packages", "## Layout"))); err == nil {
		t.Error("a page without ## Packages parsed")
	}
}

func TestCheck(t *testing.T) {
	layers, err := ParseLayers([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		pkg  Package
		want []Violation
	}{
		"down the table": {
			pkg: Package{Path: "pkg/server", Imports: []string{"pkg/hook", "pkg/kube"}},
		},
		"one row": {
			pkg: Package{Path: "pkg/hook", Imports: []string{"pkg/hook/operation"}},
		},
		"the command imports the operator": {
			pkg: Package{Path: "cmd/addon-operator", Imports: []string{"pkg/operator", "pkg/kube"}},
		},
		"up the table": {
			pkg:  Package{Path: "pkg/kube", Imports: []string{"pkg/hook/operation"}},
			want: []Violation{{Importer: "pkg/kube", Imported: "pkg/hook/operation", Rule: RuleDown}},
		},
		"up the table from a package under a listed one": {
			pkg:  Package{Path: "pkg/kube/watch", Imports: []string{"pkg/server/api"}},
			want: []Violation{{Importer: "pkg/kube/watch", Imported: "pkg/server/api", Rule: RuleDown}},
		},
		"up the table in tests": {
			pkg:  Package{Path: "pkg/hook", TestImports: []string{"pkg/server"}},
			want: []Violation{{Importer: "pkg/hook", Imported: "pkg/server", Rule: RuleDown, InTests: true}},
		},
		"another package imports the operator": {
			pkg: Package{Path: "pkg/server", Imports: []string{"pkg/operator"}},
			want: []Violation{
				{Importer: "pkg/server", Imported: "pkg/operator", Rule: RuleOperator},
				{Importer: "pkg/server", Imported: "pkg/operator", Rule: RuleDown},
			},
		},
		"an e2e test imports the operator": {
			pkg:  Package{Path: "e2e/operator", TestImports: []string{"pkg/operator", "pkg/kube"}},
			want: []Violation{{Importer: "e2e/operator", Imported: "pkg/operator", Rule: RuleOperator, InTests: true}},
		},
		"a package without a row": {
			pkg:  Package{Path: "pkg/utils", Imports: []string{"pkg/kube"}},
			want: []Violation{{Importer: "pkg/utils", Rule: RuleListed}},
		},
		"a build tool needs no row": {
			pkg: Package{Path: "hack/gendeploy", Imports: []string{"pkg/kube"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Check(layers, []Package{tc.pkg})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestViolationString(t *testing.T) {
	tests := map[string]struct {
		v    Violation
		want string
	}{
		"import": {
			Violation{Importer: "pkg/kube", Imported: "pkg/hook", Rule: RuleDown},
			"pkg/kube imports pkg/hook: " + RuleDown,
		},
		"in tests": {
			Violation{Importer: "e2e/x", Imported: "pkg/operator", Rule: RuleOperator, InTests: true},
			"e2e/x imports pkg/operator (in its tests): " + RuleOperator,
		},
		"no row": {
			Violation{Importer: "pkg/utils", Rule: RuleListed},
			"pkg/utils: " + RuleListed,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.v.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	const mod = "github.com/addon-operator/addon-operator"
	stream := `{"ImportPath": "fmt", "Standard": true, "Imports": ["errors"]}
{"ImportPath": "k8s.io/client-go/rest", "Module": {"Path": "k8s.io/client-go"}, "Imports": ["fmt"]}
{"ImportPath": "` + mod + `/pkg/kube", "Module": {"Path": "` + mod + `", "Main": true},
 "Imports": ["fmt", "k8s.io/client-go/rest", "` + mod + `/pkg/values"],
 "TestImports": ["testing", "` + mod + `/pkg/values", "` + mod + `/pkg/jq"],
 "XTestImports": ["` + mod + `/pkg/kube", "` + mod + `/pkg/jq", "` + mod + `/pkg/hook"]}
`
	got, err := decode(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{{Path: "pkg/kube", Imports: []string{"pkg/values"}, TestImports: []string{"pkg/jq", "pkg/hook"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
}
