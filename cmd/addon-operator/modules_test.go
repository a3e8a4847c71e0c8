package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestModulesCommandsGolden(t *testing.T) {
	dir := filepath.Join("testdata", "offline")
	common := []string{
		"--modules-dir", filepath.Join(dir, "modules"),
		"--global-hooks-dir", filepath.Join(dir, "global-hooks"),
		"--config", filepath.Join(dir, "configmap.yaml"),
	}
	tests := []struct {
		golden string
		args   []string
	}{
		{"list.txt", []string{"plan", "list"}},
		{"list.json", []string{"plan", "list", "-o", "json"}},
		{"values-web.yaml", []string{"plan", "values", "web", "-o", "yaml"}},
		{"values-web-explain.txt", []string{"plan", "values", "web", "--explain"}},
		{"values-global-explain.json", []string{"plan", "values", "global", "--explain", "-o", "json"}},
		{"render-web.txt", []string{"plan", "render", "web"}},
		{"render-cache.yaml", []string{"plan", "render", "cache", "-o", "yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs(append(tt.args, common...))
			if err := root.Execute(); err != nil {
				t.Fatalf("%v: %v", tt.args, err)
			}
			// Paths differ per checkout; make them relative to the fixture.
			got := bytes.ReplaceAll(out.Bytes(), []byte(mustAbs(t, dir)), []byte("$FIXTURE"))
			golden := filepath.Join(dir, "golden", tt.golden)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%v (-want +got), regenerate with -update:\n%s", tt.args, diff)
			}
		})
	}
}

func TestModulesCommandErrors(t *testing.T) {
	dir := filepath.Join("testdata", "offline")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown module", []string{"plan", "values", "nope"}, `no module "nope"`},
		{"not a chart", []string{"plan", "render", "db"}, `module "db" has no chart`},
		{"bad output", []string{"plan", "list", "-o", "xml"}, `--output "xml"`},
		{"config is not a ConfigMap", []string{"plan", "list", "--config", filepath.Join(dir, "modules", "values.yaml")}, `kind is "", want ConfigMap`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCommand()
			root.SetOut(&bytes.Buffer{})
			root.SetErr(&bytes.Buffer{})
			root.SetArgs(append(tt.args, "--modules-dir", filepath.Join(dir, "modules"), "--global-hooks-dir", filepath.Join(dir, "global-hooks")))
			err := root.Execute()
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
