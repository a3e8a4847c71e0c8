package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/") //nolint:gochecknoglobals // the test binary's -update flag

// tree is a module tree: web (two ConfigMaps, the second one switched by
// a value) and cache (one ConfigMap), both enabled.
func writeTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"modules/values.yaml":                        "webEnabled: true\ncacheEnabled: true\n",
		"modules/010-web/values.yaml":                "web:\n  replicas: 1\n  extra: true\n",
		"modules/010-web/templates/a.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  replicas: {{ .Values.web.replicas | quote }}\n",
		"modules/010-web/templates/b.yaml":           "{{- if .Values.web.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-extra\n{{- end }}\n",
		"modules/010-web/openapi/config-values.yaml": "type: object\nproperties:\n  replicas: {type: integer}\n  extra: {type: boolean}\n",
		"modules/020-cache/templates/cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache\n",
		"global-hooks/.keep":                         "",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cliRun is one run of the binary's command line.
type cliRun struct {
	out, err string
	code     int
}

func run(t *testing.T, args ...string) cliRun {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	// Only what the flags say: no kubeconfig or namespace of the shell.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	r := cliRun{}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run %v: %v", args, err)
		}
		r.code = exit.ExitCode()
	}
	r.out, r.err = out.String(), errOut.String()
	return r
}

// golden compares the run's stdout and exit code, with the test's
// namespace written NS, with testdata/NAME, or rewrites it under -update.
func (r cliRun) golden(t *testing.T, name, namespace string, code int) {
	t.Helper()
	got := strings.ReplaceAll(r.out, namespace, "NS") + "--- exit code " + strconv.Itoa(r.code) + "\n"
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got), regenerate with -update:\n%s\nstderr:\n%s", path, diff, r.err)
	}
	if r.code != code {
		t.Errorf("exit code %d, want %d", r.code, code)
	}
}

func (r cliRun) want(t *testing.T, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.out, r.err)
	}
	for _, p := range parts {
		if !strings.Contains(r.out, p) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", p, r.out, r.err)
		}
	}
}

// TestDiffAgainstDeployedModules deploys a tree with the operator, then
// diffs changed trees and ConfigMaps against it: nothing after deploying,
// then a ConfigMap change (a file, then the live ConfigMap) that updates
// one object, deletes another and disables a module, then a module removed
// from disk. The live render --diff agrees while the operator runs.
func TestDiffAgainstDeployedModules(t *testing.T) {
	h := operatortest.New(t, cp, bin)
	dir := writeTree(t)
	h.SetConfig(map[string]string{"web": "replicas: 1\n"})
	op := h.Start(operatortest.Options{ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks")})
	for _, m := range []string{"web", "cache"} {
		op.WaitModule(m, "Ready", func(s status.ModuleStatus) bool { return s.Phase == status.PhaseReady })
	}
	cluster := []string{"--kubeconfig", cp.Kubeconfig, "-n", h.Namespace}
	tree := func(d string) []string {
		return []string{"--modules-dir", filepath.Join(d, "modules"), "--global-hooks-dir", filepath.Join(d, "global-hooks")}
	}
	diff := func(extra ...string) cliRun {
		return run(t, append(append(append([]string{"diff"}, cluster...), tree(dir)...), extra...)...)
	}

	diff().golden(t, "diff-deployed.txt", h.Namespace, 0)
	run(t, append([]string{"live", "module", "render", "web", "--diff", "--debug-socket", op.DebugSocket()}, cluster...)...).
		want(t, 0, "0 to create, 0 to update, 0 to delete, 2 unchanged")
	// The running operator says why each module is enabled.
	run(t, "live", "module", "list", "--debug-socket", op.DebugSocket()).
		want(t, 0, "webEnabled: true in modules/values.yaml", "cacheEnabled: true in modules/values.yaml")

	ns := h.Namespace
	changes := []string{
		"module web: changes (webEnabled: true in modules/values.yaml)",
		"ConfigMap/" + ns + "/web: to be updated", `-  replicas: "1"`, `+  replicas: "3"`,
		"ConfigMap/" + ns + "/web-extra: to be deleted",
		"module cache: to be disabled (cacheEnabled: false in the ConfigMap)",
		"ConfigMap/" + ns + "/cache: to be deleted",
		"modules: 0 to enable, 1 to disable, 0 to remove; objects: 0 to create, 1 to update, 2 to delete, 0 unchanged",
	}
	cm := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addon-operator}\ndata:\n"+
		"  web: |\n    replicas: 3\n    extra: false\n  cacheEnabled: \"false\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	diff("--config", cm).golden(t, "diff-configmap-change.txt", ns, 1)

	// The live ConfigMap is read when no --config is given; the operator
	// is stopped first, so that it does not apply the change.
	op.Stop()
	h.SetConfig(map[string]string{"web": "replicas: 3\nextra: false\n", "cacheEnabled": "false"})
	diff().want(t, 1, changes...)
	h.SetConfig(map[string]string{"web": "replicas: 1\n"})

	if err := os.RemoveAll(filepath.Join(dir, "modules", "020-cache")); err != nil {
		t.Fatal(err)
	}
	diff().golden(t, "diff-module-removed.txt", ns, 1)
	diff("web").want(t, 0, "objects: 0 to create, 0 to update, 0 to delete, 2 unchanged")
}
