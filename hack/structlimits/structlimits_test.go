package structlimits

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stillOver are the operator's types that are over a limit today, each
// with the counts it may not exceed while it is split up (docs/
// architecture.md, "Owners"). An entry may only shrink: a type that grows
// fails, and so does one that shrank or came under the limits without its
// entry being lowered or removed. No type may be added.
//
//nolint:gochecknoglobals // the test's table
var stillOver = map[string]Type{
	"operator.Deps":     {Fields: 25},
	"operator.Operator": {Fields: 35, Methods: 74},
}

// TestOperator measures pkg/operator and the packages under it: each type
// over a limit fails, named with its counts, unless stillOver holds it at
// no more than its entry's counts.
func TestOperator(t *testing.T) {
	types, err := Measure(filepath.Join("..", "..", "pkg", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	if len(types) < 20 {
		t.Fatalf("measured only %d types; is pkg/operator still there?", len(types))
	}
	seen := map[string]bool{}
	for _, ty := range types {
		over := ty.Over()
		if over == "" {
			if _, ok := stillOver[ty.Name]; ok {
				t.Errorf("%s is within the limits now (%d fields, %d methods): remove its entry from stillOver", ty.Name, ty.Fields, ty.Methods)
			}
			continue
		}
		ceiling, ok := stillOver[ty.Name]
		seen[ty.Name] = true
		switch {
		case !ok:
			t.Errorf("%s has %s", ty.Name, over)
		case ty.Fields > ceiling.Fields || ty.Methods > ceiling.Methods:
			t.Errorf("%s has %s, more than the %d fields and %d methods it is held at", ty.Name, over, ceiling.Fields, ceiling.Methods)
		case ty.Fields < ceiling.Fields || ty.Methods < ceiling.Methods:
			t.Errorf("%s shrank to %d fields and %d methods: lower its entry in stillOver to that", ty.Name, ty.Fields, ty.Methods)
		}
	}
	for name := range stillOver {
		if !seen[name] {
			if _, found := find(types, name); !found {
				t.Errorf("%s is gone: remove its entry from stillOver", name)
			}
		}
	}
}

func find(types []Type, name string) (Type, bool) {
	for _, ty := range types {
		if ty.Name == name {
			return ty, true
		}
	}
	return Type{}, false
}

func TestMeasure(t *testing.T) {
	root := filepath.Join(t.TempDir(), "operator")
	files := map[string]string{
		"a.go": `package operator

type small struct{ a, b int; c string }

// wide's fields: two names in one entry, an embedded type, a pointer.
type wide struct {
	x, y int
	small
	*other
}

type other struct{}

func (s small) One()          {}
func (s *small) Two()         {}
func (g *gen[T]) Three()      {}
func (g gen[T]) Four()        {}
func (p pair[K, V]) Five()    {}
func free()                   {}

type gen[T any] struct{ v T }
type pair[K comparable, V any] struct{}
type named int
func (named) Six() {}
`,
		// Test files are not measured.
		"a_test.go": "package operator\n\nfunc (s small) InTest() {}\n\ntype testOnly struct{ a, b, c int }\n",
		"sub/b.go":  "package sub\n\ntype small struct{ a int }\n\nfunc (small) M() {}\n",
		// Test data is not a package.
		"testdata/c.go": "package c\n\ntype data struct{ a int }\n",
	}
	for name, src := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Measure(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Type{
		{Name: "operator.gen", Fields: 1, Methods: 2},
		{Name: "operator.named", Methods: 1},
		{Name: "operator.other"},
		{Name: "operator.pair", Methods: 1},
		{Name: "operator.small", Fields: 3, Methods: 2},
		{Name: "operator.sub.small", Fields: 1, Methods: 1},
		{Name: "operator.wide", Fields: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
}

func TestOver(t *testing.T) {
	tests := map[string]struct {
		ty   Type
		want string
	}{
		"at the limits": {Type{Fields: MaxFields, Methods: MaxMethods}, ""},
		"fields":        {Type{Fields: MaxFields + 1}, "16 fields (at most 15)"},
		"methods":       {Type{Methods: MaxMethods + 2}, "32 methods (at most 30)"},
		"both":          {Type{Fields: 44, Methods: 117}, "44 fields (at most 15), 117 methods (at most 30)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.ty.Over(); got != tc.want {
				t.Errorf("Over() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMeasureBadSource(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package x\n\ntype {"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(root); err == nil {
		t.Error("Measure of a file that does not parse returned no error")
	}
}
