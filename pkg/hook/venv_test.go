package hook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeVenvFile writes an executable file with body at dir/name.
func writeVenvFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	//nolint:gosec // G306: hooks and interpreters must be executable
	if err := os.WriteFile(p, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakePython records how it was started in $TEST_OUT/python.
const fakePython = `#!/bin/sh
{ echo "args=$*"; echo "PYTHONHOME=${PYTHONHOME-unset}"; echo "VIRTUAL_ENV=${VIRTUAL_ENV-unset}"; echo "PATH=$PATH"; } > "$TEST_OUT/python"
`

func TestPythonHookRunsWithModuleVenv(t *testing.T) {
	tests := []struct {
		name      string
		pyvenvCfg bool
		want      func(venv string) []string
	}{
		{"relocated Python: PYTHONHOME", false, func(venv string) []string {
			return []string{"PYTHONHOME=" + venv, "VIRTUAL_ENV=unset", "PATH=/usr/bin:/bin"}
		}},
		{"python3 -m venv: VIRTUAL_ENV and PATH", true, func(venv string) []string {
			return []string{"PYTHONHOME=unset", "VIRTUAL_ENV=" + venv, "PATH=" + venv + "/bin:/usr/bin:/bin"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, out, logs := testExecutor(t)
			e.Env = append(e.Env, "PATH=/usr/bin:/bin", "PYTHONHOME=/elsewhere")
			module := t.TempDir()
			venv := filepath.Join(module, "hooks", "venv")
			writeVenvFile(t, venv, "bin/python3", fakePython)
			if tt.pyvenvCfg {
				writeVenvFile(t, venv, "pyvenv.cfg", "home = /usr/bin\n")
			}
			hook := writeVenvFile(t, module, "hooks/sub/check.py", "#!/no/such/python\n")
			if _, err := e.Run(t.Context(), Run{Path: hook, Args: []string{"a"}}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(out, "python"))), "\n")
			want := append([]string{"args=" + hook + " a"}, tt.want(venv)...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("python started with\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, err := e.Config(t.Context(), hook); err != nil {
				t.Fatalf("Config: %v", err)
			}
			if got := readFile(t, filepath.Join(out, "python")); !strings.Contains(got, "args="+hook+" --config\n") {
				t.Errorf("--config started python with %q", got)
			}
			if strings.Contains(logs.buf.String(), "without a virtual environment") {
				t.Error("warned about a missing venv")
			}
		})
	}
}

func TestPythonHookWithoutVenvRunsAsScriptAndWarnsOnce(t *testing.T) {
	e, out, logs := testExecutor(t)
	module := t.TempDir()
	// Not executable: no venv.
	if err := os.MkdirAll(filepath.Join(module, "hooks", "venv", "bin"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(module, "hooks", "venv", "bin", "python3"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hook := writeVenvFile(t, module, "hooks/check.py", "#!/bin/sh\necho ran > \"$TEST_OUT/script\"\n")
	for range 2 {
		if _, err := e.Run(t.Context(), Run{Path: hook}); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if got := readFile(t, filepath.Join(out, "script")); got != "ran\n" {
		t.Errorf("script wrote %q", got)
	}
	if n := strings.Count(logs.buf.String(), "Python hook runs without a virtual environment"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.buf.String())
	}
}

// TestPythonHookRealVenv runs a hook with the interpreter of a venv made by
// "python3 -m venv": it sees the venv as its prefix and the standard
// library, which PYTHONHOME would have hidden.
func TestPythonHookRealVenv(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed (hack/packages/ensure.sh test installs it): %v", err)
	}
	module := t.TempDir()
	venv := filepath.Join(module, "hooks", "venv")
	if out, err := exec.CommandContext(t.Context(), python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	e, out, _ := testExecutor(t)
	e.Timeout = 0
	hook := writeVenvFile(t, module, "hooks/prefix.py", `#!/usr/bin/env python3
import json, os, sys
with open(os.path.join(os.environ["TEST_OUT"], "prefix"), "w") as f:
    f.write(sys.prefix)
`)
	if _, err := e.Run(t.Context(), Run{Path: hook}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := readFile(t, filepath.Join(out, "prefix")); got != venv {
		t.Errorf("sys.prefix %q, want the venv %q", got, venv)
	}
}
