package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runCLI runs a command line as the binary would, with stdin, and returns
// its stdout, stderr and exit code.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	if err := root.ExecuteContext(t.Context()); err != nil {
		code = exitCode(err)
	}
	return out.String(), errOut.String(), code
}

// TestCLIGolden pins the output and exit code of the offline commands:
// stdout, then stderr and the exit code, in one golden file each.
func TestCLIGolden(t *testing.T) {
	t.Setenv("ADDON_OPERATOR_NAMESPACE", "")
	off := filepath.Join("testdata", "offline")
	tree := []string{"--modules-dir", filepath.Join(off, "modules"), "--global-hooks-dir", filepath.Join(off, "global-hooks")}
	withCM := append([]string{"--config", filepath.Join(off, "configmap.yaml")}, tree...)
	lintDir := filepath.Join("testdata", "lint")
	lintTree := []string{"--modules-dir", filepath.Join(lintDir, "modules"), "--global-hooks-dir", filepath.Join(lintDir, "global-hooks")}
	cm, err := os.ReadFile(filepath.Join(off, "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		golden string
		stdin  string
		args   []string
	}{
		{"plan-list.txt", "", append([]string{"plan", "list"}, withCM...)},
		{"plan-list-stdin.txt", string(cm), append([]string{"plan", "list", "--config", "-"}, tree...)},
		{"plan-list-overrides.txt", "", append([]string{"plan", "list", "-f", filepath.Join(off, "overrides.yaml"), "--set", "webEnabled=false"}, withCM...)},
		{"plan-values-default-yaml.txt", "", append([]string{"plan", "values", "global", "--set", "global.tier=gold"}, withCM...)},
		{"plan-render-json.txt", "", append([]string{"plan", "render", "web", "-o", "json", "-n", "web-ns"}, withCM...)},
		{"plan-render-show-only.txt", "", append([]string{"plan", "render", "cache", "--show-only", "templates/cm.yaml"}, withCM...)},
		{"plan-render-removed-api.txt", "", append([]string{"plan", "render", "cache", "--kube-version", "1.30", "--set", "cache.legacyIngress=true"}, withCM...)},
		{"plan-render-old-kube.txt", "", append([]string{"plan", "render", "cache", "--kube-version", "1.21", "-s", "templates/ingress.yaml",
			"--set", "cache.legacyIngress=true"}, withCM...)},
		{"plan-render-unknown-template.txt", "", append([]string{"plan", "render", "cache", "--show-only", "templates/nope.yaml"}, withCM...)},
		{"plan-hooks.txt", "", append([]string{"plan", "hooks"}, withCM...)},
		{"modules-alias.txt", "", append([]string{"modules", "list"}, withCM...)},
		{"lint-clean.txt", "", append([]string{"lint"}, withCM...)},
		{"lint-broken.txt", "", append([]string{"lint", "--config", filepath.Join(lintDir, "configmap.yaml")}, lintTree...)},
		{"lint-broken.json", "", append([]string{"lint", "-o", "json", "--config", filepath.Join(lintDir, "configmap.yaml")}, lintTree...)},
		{"lint-overrides.txt", "", append([]string{"lint", "--set", "nopeEnabled=true", "--set", "web.replicas=many"}, withCM...)},
		{"plan-list-name.txt", "", append([]string{"plan", "list", "-o", "name"}, withCM...)},
		{"plan-list-jsonpath.txt", "", append([]string{"plan", "list", "-o", `jsonpath={range [*]}{.name}={.enabled}{"\n"}{end}`}, withCM...)},
		{"unknown-subcommand.txt", "", []string{"plan", "lsit"}},
		{"unknown-live-subcommand.txt", "", []string{"live", "modul", "list"}},
		{"unknown-command.txt", "", []string{"rendr"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.stdin, tt.args...)
			got := stdout + "--- stderr\n" + stderr + "--- exit code " + itoa(code) + "\n"
			got = strings.ReplaceAll(got, mustAbs(t, "testdata")+"/", "testdata/")
			checkGolden(t, filepath.Join("testdata", "cli", tt.golden), got)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got), regenerate with -update:\n%s", golden, diff)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit code %d", args, code)
		}
		gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		v := readVersion()
		for _, want := range []string{"addon-operator " + version, "go:", "helm:", "kubernetes client:", v.Go} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
		// The test binary records the module's dependencies as the
		// operator's binary does.
		for _, dep := range []string{"helm.sh/helm/v3 " + v.Helm, "k8s.io/client-go " + v.KubeClient} {
			if !strings.Contains(string(gomod), dep) {
				t.Errorf("%v: %q is not in go.mod", args, dep)
			}
		}
	}
}
