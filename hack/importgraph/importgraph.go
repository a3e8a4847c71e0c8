// Package importgraph checks the import rule of docs/architecture.md
// against the import graph that go list reports: the page's package table
// is read as layers (a package imports only packages in rows below its
// own), nothing but cmd/addon-operator imports pkg/operator, and every
// package under pkg/ and cmd/ has a row. Its test runs the check over the
// repository, so the page and the code cannot drift apart unnoticed.
package importgraph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// The rules of docs/architecture.md, as the violations name them.
const (
	RuleDown     = "imports point down the package table of docs/architecture.md: a package imports only packages in rows below its own"
	RuleOperator = "nothing imports pkg/operator but cmd/addon-operator"
	RuleListed   = "every package under pkg/ and cmd/ has a row in the package table of docs/architecture.md (or sits under a package that has one)"
)

// operatorPkg and its one importer, commandPkg.
const (
	operatorPkg = "pkg/operator"
	commandPkg  = "cmd/addon-operator"
)

// Layers are the rows of the package table: each listed package and the
// index of its row, from 0 at the top. Packages named in one row share it.
type Layers map[string]int

// errNoTable means the page has no package table under "## Packages".
var errNoTable = errors.New("no package table under ## Packages")

// backticked finds the `pkg/...` and `cmd/...` names in a table cell.
var backticked = regexp.MustCompile("`((?:pkg|cmd)/[^`]*)`")

// ParseLayers reads the package table of the "## Packages" section of
// docs/architecture.md: a row per line starting with "|", its first cell
// naming one or more packages in backticks.
func ParseLayers(page []byte) (Layers, error) {
	layers := Layers{}
	in := false
	row := 0
	sc := bufio.NewScanner(bytes.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		names := backticked.FindAllStringSubmatch(cells[1], -1)
		if len(names) == 0 {
			continue // the header and the separator
		}
		for _, n := range names {
			layers[n[1]] = row
		}
		row++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the page: %w", err)
	}
	if len(layers) == 0 {
		return nil, errNoTable
	}
	return layers, nil
}

// Row returns the row of pkg: its own, or that of its nearest listed
// parent (pkg/values/cel is in pkg/values' row). ok is false when neither
// pkg nor any parent is listed.
func (l Layers) Row(pkg string) (row int, ok bool) {
	for p := pkg; p != "." && p != ""; p = parent(p) {
		if r, found := l[p]; found {
			return r, true
		}
	}
	return 0, false
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// Package is one package of the module and its imports from the module,
// all as paths relative to the module's root.
type Package struct {
	Path string
	// Imports are those of its non-test files; TestImports those that
	// only its tests (in-package or external) add.
	Imports     []string
	TestImports []string
}

// Violation is an import (or a missing row) that breaks a rule.
type Violation struct {
	Importer string
	// Imported is empty for RuleListed.
	Imported string
	Rule     string
	// InTests says that only the importer's tests import Imported.
	InTests bool
}

func (v Violation) String() string {
	if v.Imported == "" {
		return fmt.Sprintf("%s: %s", v.Importer, v.Rule)
	}
	where := ""
	if v.InTests {
		where = " (in its tests)"
	}
	return fmt.Sprintf("%s imports %s%s: %s", v.Importer, v.Imported, where, v.Rule)
}

// Check returns every violation of the rules by pkgs, in the order of
// pkgs and their imports.
func Check(l Layers, pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		own, listed := l.Row(p.Path)
		if !listed && isProduct(p.Path) {
			out = append(out, Violation{Importer: p.Path, Rule: RuleListed})
		}
		for _, imp := range p.Imports {
			out = append(out, checkImport(l, p.Path, imp, own, listed, false)...)
		}
		for _, imp := range p.TestImports {
			out = append(out, checkImport(l, p.Path, imp, own, listed, true)...)
		}
	}
	return out
}

// checkImport checks one import of importer, whose row is own when listed.
func checkImport(l Layers, importer, imported string, own int, listed, inTests bool) []Violation {
	var out []Violation
	if imported == operatorPkg && importer != commandPkg && !strings.HasPrefix(importer, operatorPkg+"/") {
		out = append(out, Violation{Importer: importer, Imported: imported, Rule: RuleOperator, InTests: inTests})
	}
	if !listed {
		return out // only the table's packages are layered
	}
	if row, ok := l.Row(imported); ok && row < own {
		out = append(out, Violation{Importer: importer, Imported: imported, Rule: RuleDown, InTests: inTests})
	}
	return out
}

// isProduct reports whether a package must have a row: the operator's
// packages and commands, not e2e/, hack/ or modules' hooks.
func isProduct(path string) bool {
	return strings.HasPrefix(path, "pkg/") || strings.HasPrefix(path, "cmd/")
}

// listed is the part of go list -json's output that List reads.
type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// List runs go list -deps -json ./... in the module rooted at dir and
// returns the module's own packages with their imports from the module.
func List(ctx context.Context, dir string) ([]Package, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-deps", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	return decode(bytes.NewReader(stdout))
}

// decode reads go list -json's stream of objects.
func decode(r io.Reader) ([]Package, error) {
	dec := json.NewDecoder(r)
	var out []Package
	for {
		var p listed
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		mod := p.Module.Path + "/"
		own := func(paths []string) []string {
			var rel []string
			for _, imp := range paths {
				if r, ok := strings.CutPrefix(imp, mod); ok {
					rel = append(rel, r)
				}
			}
			return rel
		}
		pkg := Package{Path: strings.TrimPrefix(p.ImportPath, mod), Imports: own(p.Imports)}
		for _, imp := range own(append(p.TestImports, p.XTestImports...)) {
			if !slices.Contains(pkg.Imports, imp) && !slices.Contains(pkg.TestImports, imp) && imp != pkg.Path {
				pkg.TestImports = append(pkg.TestImports, imp)
			}
		}
		out = append(out, pkg)
	}
}
