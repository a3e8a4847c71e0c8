// Package structlimits measures the types of a package tree against the
// size limits of docs/architecture.md ("Owners"): no struct of more than
// MaxFields fields, no type with more than MaxMethods methods. Its test
// runs the measure over pkg/operator and its packages, so a type that
// grows past a limit fails the build with its name and its count.
package structlimits

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// The limits of docs/architecture.md for the operator's packages.
const (
	MaxFields  = 15
	MaxMethods = 30
)

// Type is one named type of a package and its size: the fields of a
// struct (each name counts, an embedded field is one) and the methods
// declared with it as receiver (value or pointer).
type Type struct {
	// Name is the package's directory, relative to the measured root's
	// parent, and the type's name: "operator.Operator".
	Name    string
	Fields  int
	Methods int
}

// Over returns what of t is over the limits, in words, or "" when
// nothing is.
func (t Type) Over() string {
	var out []string
	if t.Fields > MaxFields {
		out = append(out, fmt.Sprintf("%d fields (at most %d)", t.Fields, MaxFields))
	}
	if t.Methods > MaxMethods {
		out = append(out, fmt.Sprintf("%d methods (at most %d)", t.Methods, MaxMethods))
	}
	return strings.Join(out, ", ")
}

// Measure parses the non-test Go files of root and of every directory
// under it and returns each named type, sorted by name. A type's name is
// prefixed with its directory relative to root's parent, its separators
// turned to dots: "operator.Operator", "operator.modulepub.Publisher".
func Measure(root string) ([]Type, error) {
	base := filepath.Dir(filepath.Clean(root))
	byName := map[string]*Type{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return fmt.Errorf("relative path of %s: %w", path, err)
		}
		return measureDir(path, strings.ReplaceAll(filepath.ToSlash(rel), "/", "."), byName)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Type, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// measureDir adds the types of one directory's non-test files to byName.
func measureDir(dir, prefix string, byName map[string]*Type) error {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, notTest, parser.SkipObjectResolution) //nolint:staticcheck // ParseDir is deprecated for go/packages, which type-checks; counting needs only the syntax
	if err != nil {
		return fmt.Errorf("parse %s: %w", dir, err)
	}
	get := func(name string) *Type {
		full := prefix + "." + name
		if byName[full] == nil {
			byName[full] = &Type{Name: full}
		}
		return byName[full]
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						ts, ok := spec.(*ast.TypeSpec)
						if !ok {
							continue
						}
						t := get(ts.Name.Name)
						if st, ok := ts.Type.(*ast.StructType); ok {
							t.Fields = countFields(st.Fields)
						}
					}
				case *ast.FuncDecl:
					if name := receiver(d); name != "" {
						get(name).Methods++
					}
				}
			}
		}
	}
	return nil
}

// countFields counts a struct's fields: every name of a field list
// entry, and one for an embedded field.
func countFields(fl *ast.FieldList) int {
	n := 0
	for _, f := range fl.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// receiver returns the name of a method's receiver type, "" for a
// function.
func receiver(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	expr := d.Recv.List[0].Type
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.IndexExpr: // a generic type's method: T[P]
			expr = e.X
		case *ast.IndexListExpr: // T[P, Q]
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}
