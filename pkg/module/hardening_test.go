package module

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
)

// TestDiscoverSymlinkLoops names each loop and the link where it starts.
func TestDiscoverSymlinkLoops(t *testing.T) {
	tests := []struct {
		name    string
		entries map[string]node
		want    SymlinkLoopError // paths relative to the root
	}{
		{
			name:    "module dir linking to itself",
			entries: map[string]node{"m/010-self": symlink("010-self")},
			want:    SymlinkLoopError{Path: "m/010-self", Link: "m/010-self", Target: "010-self"},
		},
		{
			name:    "two module dirs linking to each other",
			entries: map[string]node{"m/010-a": symlink("020-b"), "m/020-b": symlink("010-a")},
			want:    SymlinkLoopError{Path: "m/010-a", Link: "m/010-a", Target: "020-b"},
		},
		{
			name:    "a module's values.yaml",
			entries: map[string]node{"m/010-a/values.yaml": symlink("values.yaml")},
			want:    SymlinkLoopError{Path: "m/010-a/values.yaml", Link: "m/010-a/values.yaml", Target: "values.yaml"},
		},
		{
			name:    "a module's module.yaml",
			entries: map[string]node{"m/010-a/module.yaml": symlink("loop.yaml"), "m/010-a/loop.yaml": symlink("module.yaml")},
			want:    SymlinkLoopError{Path: "m/010-a/module.yaml", Link: "m/010-a/module.yaml", Target: "loop.yaml"},
		},
		{
			name:    "the common values.yaml",
			entries: map[string]node{"m/values.yaml": symlink("values.yaml"), "m/010-a": dir()},
			want:    SymlinkLoopError{Path: "m/values.yaml", Link: "m/values.yaml", Target: "values.yaml"},
		},
		{
			name:    "a hook",
			entries: map[string]node{"m/010-a/hooks/x.sh": symlink("y.sh"), "m/010-a/hooks/y.sh": symlink("x.sh")},
			want:    SymlinkLoopError{Path: "m/010-a/hooks/x.sh", Link: "m/010-a/hooks/x.sh", Target: "y.sh"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _, _, err := discoverTree(t, tt.entries, Options{ModulesDirs: []string{"m"}})
			var loop *SymlinkLoopError
			if !errors.As(err, &loop) {
				t.Fatalf("Discover: %v, want a *SymlinkLoopError", err)
			}
			if !errors.Is(err, syscall.ELOOP) {
				t.Errorf("errors.Is(err, ELOOP) is false for %v", err)
			}
			got := SymlinkLoopError{Path: rel(t, root, loop.Path), Link: rel(t, root, loop.Link), Target: loop.Target}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("loop (-want +got):\n%s", diff)
			}
			if msg := err.Error(); !strings.Contains(msg, "symlink loop") || !strings.Contains(msg, loop.Link) {
				t.Errorf("error %q does not name the loop and its link %s", msg, loop.Link)
			}
		})
	}
}

// TestSymlinkLoopInParent names the parent directory where the loop is,
// not the path under it.
func TestSymlinkLoopInParent(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]node{"a": symlink("b"), "b": symlink("a")})
	path := filepath.Join(root, "a", "module.yaml")
	_, err := os.Stat(path)
	err = loopError(path, err)
	want := path + `: symlink loop at ` + filepath.Join(root, "a") + `, which points to "b", which leads back to it`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// TestDiscoverOversizedFiles refuses each YAML file over the limit,
// naming it and its size, before parsing it.
func TestDiscoverOversizedFiles(t *testing.T) {
	big := "a: " + strings.Repeat("x", filelimit.Default) + "\n"
	tests := []struct {
		name    string
		entries map[string]node
		file    string // relative to the root
	}{
		{name: "module.yaml", entries: map[string]node{"m/010-a/module.yaml": file(big)}, file: "m/010-a/module.yaml"},
		{name: "a module's values.yaml", entries: map[string]node{"m/010-a/values.yaml": file(big)}, file: "m/010-a/values.yaml"},
		{
			name: "the common values.yaml", entries: map[string]node{"m/values.yaml": file(big), "m/010-a": dir()},
			file: "m/values.yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _, _, err := discoverTree(t, tt.entries, Options{ModulesDirs: []string{"m"}})
			var tl *filelimit.TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("Discover: %v, want a *filelimit.TooLargeError", err)
			}
			want := filepath.Join(root, tt.file) + ": " + strconv.Itoa(len(big)) + " bytes, over the limit of " + strconv.Itoa(filelimit.Default)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}

func rel(t *testing.T, root, path string) string {
	t.Helper()
	r, err := filepath.Rel(root, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
