package module

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type hookCase struct {
	name     string
	entries  map[string]node // under the module dir m/a
	want     []string        // relative to the module dir
	wantLogs []map[string]string
}

func TestModuleHooks(t *testing.T) {
	runHookCases(t, []hookCase{
		{
			name: "executables found recursively and sorted",
			entries: map[string]node{
				"hooks/b.sh":        script(),
				"hooks/a/c.py":      script(),
				"hooks/010-startup": script(),
				"hooks/a.sh":        script(),
				"hooks/x/y/z":       script(),
			},
			want: []string{"hooks/010-startup", "hooks/a.sh", "hooks/a/c.py", "hooks/b.sh", "hooks/x/y/z"},
		},
		{
			name: "lib, venv and hidden entries skipped silently",
			entries: map[string]node{
				"hooks/lib/helper.sh":      script(),
				"hooks/sub/lib/helper.sh":  script(),
				"hooks/venv/bin/python3":   script(),
				"hooks/.hidden/hook":       script(),
				"hooks/.hidden-hook":       script(),
				"hooks/lib/not-executable": file(""),
				"hooks/sub/hook":           script(),
			},
			want: []string{"hooks/sub/hook"},
		},
		{
			name: "non-executable files warned unless obviously not hooks",
			entries: map[string]node{
				"hooks/forgot-chmod.sh": file("#!/bin/sh\n"),
				"hooks/README.md":       file("docs"),
				"hooks/config.yaml":     file("a: 1"),
				"hooks/config.yml":      script(),
				"hooks/data.json":       file("{}"),
				"hooks/notes.txt":       file(""),
				"hooks/ok.sh":           script(),
			},
			want: []string{"hooks/ok.sh"},
			wantLogs: []map[string]string{
				warn("hook file is not executable, ignored", "module", "a", "hook", "$ROOT/m/a/hooks/forgot-chmod.sh"),
			},
		},
	})
}

func TestModuleHookSymlinks(t *testing.T) {
	runHookCases(t, []hookCase{
		{
			name: "symlinks followed, broken ones and loops warned",
			entries: map[string]node{
				"shared/real.sh":  script(),
				"shared/dir/z":    script(),
				"hooks/link.sh":   symlink("../shared/real.sh"),
				"hooks/dirlink":   symlink("../shared/dir"),
				"hooks/dirlink2":  symlink("../shared/dir"),
				"hooks/broken.sh": symlink("../nowhere"),
				"hooks/sub/up":    symlink(".."),
			},
			want: []string{"hooks/dirlink/z", "hooks/dirlink2/z", "hooks/link.sh"},
			wantLogs: []map[string]string{
				warn("broken symlink in hooks ignored", "module", "a", "path", "$ROOT/m/a/hooks/broken.sh"),
				warn("symlink loop in hooks skipped", "module", "a", "path", "$ROOT/m/a/hooks/sub/up"),
			},
		},
		{
			name:    "hooks that is a file",
			entries: map[string]node{"hooks": script()},
			wantLogs: []map[string]string{
				warn("hooks path is not a directory", "module", "a", "path", "$ROOT/m/a/hooks"),
			},
		},
		{
			name:    "no hooks dir",
			entries: map[string]node{"Chart.yaml": file("")},
		},
	})
}

func runHookCases(t *testing.T, tests []hookCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := map[string]node{}
			for p, n := range tt.entries {
				entries["m/a/"+p] = n
			}
			entries["m/a"] = dir()
			_, set, logs, err := discoverTree(t, entries, Options{ModulesDirs: []string{"m"}})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			m, ok := set.Module("a")
			if !ok {
				t.Fatal("module a not found")
			}
			got := m.Hooks() // a fresh copy, nil when there are none (as want is then)
			for i, h := range got {
				got[i] = strings.TrimPrefix(h, m.Path()+"/")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("hooks mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs.records(t)); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
