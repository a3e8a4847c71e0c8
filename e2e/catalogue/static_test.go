package catalogue

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tests of the catalogue's files that need no cluster: the offline CLI's
// view of it, and its hooks and enabled scripts run by hand.

// executables returns every hook and enabled script of the catalogue.
func executables(t *testing.T) []string {
	t.Helper()
	root := repoDir()
	var out []string
	for _, dir := range []string{filepath.Join(root, "global-hooks", "hooks"), filepath.Join(root, "modules")} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "lib":
				return filepath.SkipDir
			case d.IsDir():
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			if strings.Contains(rel, "/hooks/") || d.Name() == "enabled" {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestHooksAreExecutablePOSIXShell checks the scripts; compiled hooks
// (ELF) only for their mode.
func TestHooksAreExecutablePOSIXShell(t *testing.T) {
	t.Parallel()
	files := executables(t)
	if len(files) < 3 {
		t.Fatalf("found %d hooks and enabled scripts, want at least 3: %v", len(files), files)
	}
	shell := "sh"
	if p, err := exec.LookPath("dash"); err == nil {
		shell = p // stricter than bash about POSIX syntax
	}
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode()&0o111 != 0o111 {
			t.Errorf("%s: mode %v, want executable by all", f, info.Mode())
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte("\x7fELF")) {
			continue // a compiled hook, built from the module's hooks-go/
		}
		if !bytes.HasPrefix(data, []byte("#!/bin/sh\n")) {
			t.Errorf("%s: does not start with #!/bin/sh", f)
		}
		if out, err := exec.CommandContext(t.Context(), shell, "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s -n %s: %v: %s", shell, f, err, out)
		}
	}
}

func TestCatalogueOffline(t *testing.T) {
	t.Parallel()
	root := repoDir()
	dirs := []string{"--modules-dir", filepath.Join(root, "modules"), "--global-hooks-dir", filepath.Join(root, "global-hooks")}
	out, err := exec.CommandContext(t.Context(), bin, append([]string{"modules", "list", "-o", "json"}, dirs...)...).Output()
	if err != nil {
		t.Fatalf("modules list: %v", err)
	}
	type entry struct {
		Name      string   `json:"name"`
		Order     int      `json:"order"`
		Enabled   bool     `json:"enabled"`
		DecidedBy string   `json:"decidedBy"`
		Helm      bool     `json:"helm"`
		Namespace string   `json:"namespace,omitempty"`
		Requires  []string `json:"requires,omitempty"`
	}
	var got []entry
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("modules list: %v: %s", err, out)
	}
	want := []entry{
		{"namespace-defaults", 10, true, "static", false, "", nil},
		{"echo-service", 20, false, "static", true, "", nil},
		{"node-exporter", 30, false, "enabled-script", true, "", nil}, // no nodes offline
		{"maintenance-windows", 40, false, "static", true, "", nil},
		{"platform-windows", 50, false, "static", true, "platform-maintenance", []string{"maintenance-windows"}},
		{"execution-hooks", 60, false, "static", true, "", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules list (-want +got):\n%s", diff)
	}

	// A route on a built-in path fails the render with a clear message.
	cm := filepath.Join(t.TempDir(), "cm.yaml")
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addon-operator}\ndata:\n  echoService: |\n    routes:\n      /info: {body: mine}\n"
	if err := os.WriteFile(cm, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.CommandContext(t.Context(), bin, append([]string{"modules", "render", "echo-service", "--config", cm}, dirs...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "echoService.routes: /info is built in") {
		t.Errorf("render with a route on /info: err %v, output:\n%s", err, out)
	}
}

// runScript runs a hook or enabled script of the catalogue with the given
// binding contexts and values, and returns what it wrote to each output
// file, by environment variable name.
func runScript(t *testing.T, rel, contexts, values string, env ...string) map[string]string {
	t.Helper()
	outputs, log, err := execScript(t, rel, contexts, values, env...)
	if err != nil {
		t.Fatalf("%s: %v: %s", rel, err, log)
	}
	return outputs
}

// execScript runs a script as runScript does and returns its output files,
// its stdout and stderr, and its error.
func execScript(t *testing.T, rel, contexts, values string, env ...string) (outputs map[string]string, log string, err error) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"BINDING_CONTEXT_PATH": contexts, "VALUES_PATH": values, "CONFIG_VALUES_PATH": "{}",
		"VALUES_JSON_PATCH_PATH": "", "CONFIG_VALUES_JSON_PATCH_PATH": "", "KUBERNETES_PATCH_PATH": "",
		"METRICS_PATH": "", "MODULE_ENABLED_RESULT": "",
		"VALIDATING_RESPONSE_PATH": "", "CONVERSION_RESPONSE_PATH": "",
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(repoDir(), rel))
	cmd.Env = append(withoutEnv(os.Environ(), "KUBERNETES_VERSION"), env...)
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, name+"="+path)
	}
	out, err := cmd.CombinedOutput()
	outputs = map[string]string{}
	for _, name := range []string{"VALUES_JSON_PATCH_PATH", "KUBERNETES_PATCH_PATH", "METRICS_PATH", "MODULE_ENABLED_RESULT", "VALIDATING_RESPONSE_PATH", "CONVERSION_RESPONSE_PATH"} {
		data, rerr := os.ReadFile(filepath.Join(dir, name))
		if rerr != nil {
			t.Fatal(rerr)
		}
		outputs[name] = string(data)
	}
	return outputs, string(out), err
}

func TestNodeExporterEnabledScript(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, values, want string
	}{
		{"no nodes", `{"global":{"discovery":{"nodeCount":0}},"nodeExporter":{}}`, "false"},
		{"nodes", `{"global":{"discovery":{"nodeCount":3}},"nodeExporter":{"port":9100}}`, "true"},
		{"indented", "{\n  \"global\": {\n    \"discovery\": {\n      \"nodeCount\" : 12\n    }\n  }\n}\n", "true"},
		{"no discovery", `{"global":{},"nodeExporter":{}}`, "false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := runScript(t, "modules/030-node-exporter/enabled", "[]", tt.values)
			if got := strings.TrimSpace(out["MODULE_ENABLED_RESULT"]); got != tt.want {
				t.Errorf("enabled = %q, want %q", got, tt.want)
			}
		})
	}
}
