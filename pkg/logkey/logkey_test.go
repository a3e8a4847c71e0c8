package logkey

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// attrFuncs are log/slog's attribute constructors, whose first argument
// is the key.
var attrFuncs = map[string]bool{ //nolint:gochecknoglobals // a constant set
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true,
	"Bool": true, "Time": true, "Duration": true, "Any": true, "Group": true,
}

// TestKeysComeFromThisPackage checks what sloglint cannot: that every
// attribute key in pkg/ and cmd/ is one of this package's constants, not
// a constant of its own.
func TestKeysComeFromThisPackage(t *testing.T) {
	for _, root := range []string{"..", filepath.Join("..", "..", "cmd")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || filepath.Base(filepath.Dir(path)) == "logkey" {
				return err
			}
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && isSlogAttr(call) && len(call.Args) > 0 && !isLogkey(call.Args[0]) {
					t.Errorf("%s: slog.%s key %s is not a logkey constant", path,
						call.Fun.(*ast.SelectorExpr).Sel.Name, exprString(call.Args[0]))
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func isSlogAttr(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "slog" && attrFuncs[sel.Sel.Name]
}

func isLogkey(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "logkey"
}

func exprString(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok {
		return lit.Value
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "(an expression)"
}

func TestErr(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{err: errors.New("boom"), want: "error=boom"},
		{err: fmt.Errorf("wrap: %w", errors.New("boom")), want: "error=wrap: boom"},
		{err: nil, want: "error=<nil>"},
	} {
		if got := Err(tt.err).String(); got != tt.want {
			t.Errorf("Err(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
