package module

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary is what TestDiscoverModules compares of each module.
type summary struct {
	Name  string
	Key   string
	Order int
	Path  string
}

func summarize(root string, set *Set) []summary {
	mods := set.Modules()
	if len(mods) == 0 {
		return nil // cases with no modules leave want nil
	}
	out := make([]summary, 0, len(mods))
	for _, m := range mods {
		out = append(out, summary{m.Name(), m.Key(), m.Order(), strings.ReplaceAll(m.Path(), root, "$ROOT")})
	}
	return out
}

// discoverTree writes entries under a temp root and runs Discover on the
// given modules dirs (relative to the root) with a capturing logger.
func discoverTree(t *testing.T, entries map[string]node, opts Options) (string, *Set, *logCapture, error) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, entries)
	for i, d := range opts.ModulesDirs {
		opts.ModulesDirs[i] = filepath.Join(root, d)
	}
	if opts.GlobalHooksDir != "" {
		opts.GlobalHooksDir = filepath.Join(root, opts.GlobalHooksDir)
	}
	logs, log := newLogCapture(root)
	opts.Logger = log
	set, err := Discover(opts)
	if err == nil {
		// Modules that cannot run are reported by the Set, each alone.
		err = set.Err()
	}
	return root, set, logs, err
}

type listCase struct {
	name       string
	entries    map[string]node
	dirs       []string
	unnumbered int
	want       []summary
	wantLogs   []map[string]string
}

func TestDiscoverOrder(t *testing.T) {
	runListCases(t, []listCase{
		{
			name: "numbered modules sorted by order then name",
			entries: map[string]node{
				"m/020-beta":    dir(),
				"m/010-gamma":   dir(),
				"m/010-alpha":   dir(),
				"m/delta":       dir(),
				"m/000-zero":    dir(),
				"m/123456-late": dir(),
			},
			dirs:       []string{"m"},
			unnumbered: DefaultUnnumberedOrder,
			want: []summary{
				{"zero", "zero", 0, "$ROOT/m/000-zero"},
				{"delta", "delta", 1, "$ROOT/m/delta"},
				{"alpha", "alpha", 10, "$ROOT/m/010-alpha"},
				{"gamma", "gamma", 10, "$ROOT/m/010-gamma"},
				{"beta", "beta", 20, "$ROOT/m/020-beta"},
				{"late", "late", 123456, "$ROOT/m/123456-late"},
			},
		},
		{
			name:       "unnumbered order is taken from options",
			entries:    map[string]node{"m/zeta": dir(), "m/005-eta": dir(), "m/200-cert-manager": dir()},
			dirs:       []string{"m"},
			unnumbered: 100,
			want: []summary{
				{"eta", "eta", 5, "$ROOT/m/005-eta"},
				{"zeta", "zeta", 100, "$ROOT/m/zeta"},
				{"cert-manager", "certManager", 200, "$ROOT/m/200-cert-manager"},
			},
		},
		{
			name: "symlinked module dir keeps the link path",
			entries: map[string]node{
				"elsewhere/linked/Chart.yaml": file("name: linked\n"),
				"m/010-linked":                symlink("../elsewhere/linked"),
			},
			dirs: []string{"m"},
			want: []summary{{"linked", "linked", 10, "$ROOT/m/010-linked"}},
		},
	})
}

func TestDiscoverDirEntries(t *testing.T) {
	runListCases(t, []listCase{
		{
			name: "hidden entries and docs skipped, stray files and broken links warned",
			entries: map[string]node{
				"m/.git/config":    file(""),
				"m/.hidden-module": dir(),
				"m/.hidden-file":   file(""),
				"m/README.md":      file("docs"),
				"m/stray":          file("x"),
				"m/values.yaml":    file("global: {}\n"),
				"m/010-broken":     symlink("../nowhere"),
				"m/010-a":          dir(),
			},
			dirs: []string{"m"},
			want: []summary{{"a", "a", 10, "$ROOT/m/010-a"}},
			wantLogs: []map[string]string{
				warn("broken symlink in modules dir ignored", "path", "$ROOT/m/010-broken"),
				warn("file in modules dir ignored", "path", "$ROOT/m/stray"),
			},
		},
		{
			name: "duplicate across dirs: first wins",
			entries: map[string]node{
				"m1/010-a": dir(),
				"m2/020-a": dir(),
				"m2/b":     dir(),
			},
			dirs: []string{"m1", "m2"},
			want: []summary{
				{"b", "b", 0, "$ROOT/m2/b"},
				{"a", "a", 10, "$ROOT/m1/010-a"},
			},
			wantLogs: []map[string]string{
				warn("duplicate module dir ignored", "module", "a", "path", "$ROOT/m2/020-a", "reason", "kept $ROOT/m1/010-a"),
			},
		},
		{
			name:    "a dir listed twice is read once",
			entries: map[string]node{"m/010-a": dir()},
			dirs:    []string{"m", "m/"},
			want:    []summary{{"a", "a", 10, "$ROOT/m/010-a"}},
		},
		{
			name:    "empty modules dir",
			entries: map[string]node{"m": dir()},
			dirs:    []string{"m"},
		},
		{
			name: "no modules dirs",
		},
	})
}

func runListCases(t *testing.T, tests []listCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, set, logs, err := discoverTree(t, tt.entries, Options{ModulesDirs: tt.dirs, UnnumberedOrder: tt.unnumbered})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarize(root, set)); diff != "" {
				t.Errorf("modules mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs.records(t)); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
			for _, s := range tt.want {
				if m, ok := set.Module(s.Name); !ok || m.Name() != s.Name {
					t.Errorf("Module(%q) = %v, %v", s.Name, m, ok)
				}
			}
		})
	}
}
