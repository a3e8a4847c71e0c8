package module

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// globalView is what TestGlobalHooks compares; paths relative to the root.
type globalView struct {
	Path         string
	HooksDir     string
	Hooks        []string
	ConfigSchema string
	ValuesSchema string
}

type globalCase struct {
	name      string
	entries   map[string]node
	globalDir string
	want      globalView
	wantLogs  []map[string]string
}

func TestGlobalHooksAbsent(t *testing.T) {
	runGlobalCases(t, []globalCase{
		{
			name: "no global hooks dir configured",
		},
		{
			name:      "missing global hooks dir",
			globalDir: "absent",
		},
	})
}

func TestGlobalHooks(t *testing.T) {
	runGlobalCases(t, []globalCase{
		{
			name: "hooks subdir preferred over the dir itself",
			entries: map[string]node{
				"g/hooks/a":                    script(),
				"g/hooks/lib/util":             script(),
				"g/hooks/sub/b":                script(),
				"g/not-in-hooks":               script(),
				"g/openapi/config-values.yaml": file("type: object\n"),
			},
			globalDir: "g",
			want: globalView{
				Path:         "g",
				HooksDir:     "g/hooks",
				Hooks:        []string{"g/hooks/a", "g/hooks/sub/b"},
				ConfigSchema: "g/openapi/config-values.yaml",
			},
		},
		{
			name: "the dir itself when there is no hooks subdir",
			entries: map[string]node{
				"g/a":                   script(),
				"g/sub/b":               script(),
				"g/lib/c":               script(),
				"g/.d":                  script(),
				"g/openapi/values.yaml": file("type: object\n"),
				"g/stale.sh":            file("#!/bin/sh\n"),
			},
			globalDir: "g",
			want: globalView{
				Path:         "g",
				HooksDir:     "g",
				Hooks:        []string{"g/a", "g/sub/b"},
				ValuesSchema: "g/openapi/values.yaml",
			},
			wantLogs: []map[string]string{
				warn("hook file is not executable, ignored", "hook", "$ROOT/g/stale.sh"),
			},
		},
	})
}

func runGlobalCases(t *testing.T, tests []globalCase) {
	t.Helper()
	for i := range tests {
		tt := &tests[i]
		t.Run(tt.name, func(t *testing.T) {
			root, set, logs, err := discoverTree(t, tt.entries, Options{GlobalHooksDir: tt.globalDir})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			rel := func(p string) string { return strings.TrimPrefix(p, root+"/") }
			g := set.Global()
			got := globalView{
				Path:         rel(g.Path()),
				HooksDir:     rel(g.HooksDir()),
				ConfigSchema: rel(g.ConfigSchemaPath()),
				ValuesSchema: rel(g.ValuesSchemaPath()),
			}
			for _, h := range g.Hooks() {
				got.Hooks = append(got.Hooks, rel(h))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("global mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs.records(t)); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
