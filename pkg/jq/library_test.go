package jq

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLibraryPaths(t *testing.T) {
	if got := libraryPaths("/a" + string(os.PathListSeparator) + string(os.PathListSeparator) + "/b"); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("libraryPaths = %q", got)
	}
	if got := libraryPaths(""); got != nil {
		t.Errorf("libraryPaths(\"\") = %q", got)
	}
}

func TestCompileImportsModulesFromLibraryPath(t *testing.T) {
	lib := t.TempDir()
	if err := os.WriteFile(filepath.Join(lib, "labels.jq"), []byte(`def app: .metadata.labels.app;`), 0o600); err != nil {
		t.Fatal(err)
	}
	filter := `import "labels" as l; {name: .metadata.name, app: l::app}`
	if _, err := compile(filter, nil); err == nil {
		t.Fatal("compiled an import without a library path")
	}
	code, err := compile(filter, []string{t.TempDir(), lib})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	in := map[string]any{"metadata": map[string]any{"name": "n", "labels": map[string]any{"app": "web"}}}
	v, ok := code.Run(in).Next()
	if !ok {
		t.Fatal("no output")
	}
	got, _ := v.(map[string]any)
	if got["name"] != "n" || got["app"] != "web" {
		t.Errorf("output %v", v)
	}
}
