package module

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// files is what TestModuleFiles compares; paths relative to the module dir.
type files struct {
	IsHelm        bool
	HasChartYAML  bool
	EnabledScript string
	ConfigSchema  string
	ValuesSchema  string
}

type filesCase struct {
	name     string
	entries  map[string]node // under the module dir m/a
	want     files
	wantLogs []map[string]string
}

func TestModuleChart(t *testing.T) {
	runFilesCases(t, []filesCase{
		{
			name:    "Chart.yaml makes a helm module",
			entries: map[string]node{"Chart.yaml": file("name: other\n")},
			want:    files{IsHelm: true, HasChartYAML: true},
		},
		{
			name:    "templates dir alone makes a helm module",
			entries: map[string]node{"templates/cm.yaml": file("")},
			want:    files{IsHelm: true},
		},
		{
			name:    "hooks only",
			entries: map[string]node{"hooks/h": script()},
			want:    files{},
		},
		{
			name:    "templates that is a file is not a chart",
			entries: map[string]node{"templates": file("")},
			want:    files{},
		},
	})
}

func TestModuleEnabledScript(t *testing.T) {
	runFilesCases(t, []filesCase{
		{
			name:    "executable enabled script",
			entries: map[string]node{"enabled": script()},
			want:    files{EnabledScript: "enabled"},
		},
		{
			name:    "symlinked executable enabled script",
			entries: map[string]node{"enabled": symlink("lib/enabled.sh"), "lib/enabled.sh": script()},
			want:    files{EnabledScript: "enabled"},
		},
		{
			name:    "non-executable enabled script warned",
			entries: map[string]node{"enabled": file("#!/bin/sh\n")},
			wantLogs: []map[string]string{
				warn("enabled script is not executable, ignored", "module", "a", "path", "$ROOT/m/a/enabled"),
			},
		},
		{
			name:    "enabled dir warned",
			entries: map[string]node{"enabled/x": file("")},
			wantLogs: []map[string]string{
				warn("enabled script is not a regular file, ignored", "module", "a", "path", "$ROOT/m/a/enabled"),
			},
		},
	})
}

func TestModuleSchemas(t *testing.T) {
	runFilesCases(t, []filesCase{
		{
			name: "both schemas",
			entries: map[string]node{
				"openapi/config-values.yaml": file("type: object\n"),
				"openapi/values.yaml":        file("type: object\n"),
				"openapi/doc-ru.yaml":        file(""),
			},
			want: files{ConfigSchema: "openapi/config-values.yaml", ValuesSchema: "openapi/values.yaml"},
		},
		{
			name:    "values schema only",
			entries: map[string]node{"openapi/values.yaml": file("type: object\n")},
			want:    files{ValuesSchema: "openapi/values.yaml"},
		},
		{
			name:    "openapi that is a file",
			entries: map[string]node{"openapi": file("")},
		},
	})
}

func runFilesCases(t *testing.T, tests []filesCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := map[string]node{"m/a": dir()}
			for p, n := range tt.entries {
				entries["m/a/"+p] = n
			}
			_, set, logs, err := discoverTree(t, entries, Options{ModulesDirs: []string{"m"}})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			m, _ := set.Module("a")
			rel := func(p string) string { return strings.TrimPrefix(p, m.Path()+"/") }
			got := files{
				IsHelm:        m.IsHelm(),
				HasChartYAML:  m.HasChartYAML(),
				EnabledScript: rel(m.EnabledScript()),
				ConfigSchema:  rel(m.ConfigSchemaPath()),
				ValuesSchema:  rel(m.ValuesSchemaPath()),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("module files mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLogs, logs.records(t)); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
