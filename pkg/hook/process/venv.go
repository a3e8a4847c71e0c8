package process

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// A module's Python hooks run with the Python its hooks/venv carries, as
// in the established operator: a hook whose file name ends in ".py", in a
// module dir whose hooks/venv/bin/python3 is an executable file, is started
// as "<venv>/bin/python3 <hook> <args>" (for --config as for runs), with
//
//   - PYTHONHOME=<venv>, as the established operator sets it, when the venv
//     is a relocated Python installation (no pyvenv.cfg);
//   - VIRTUAL_ENV=<venv> and <venv>/bin first on PATH, as activating it
//     does, and no PYTHONHOME, when it is a virtual environment made by
//     "python3 -m venv" (pyvenv.cfg present): PYTHONHOME would hide the
//     standard library from such a venv's interpreter, which finds it
//     through pyvenv.cfg.
//
// The venv is looked for in the hooks directory the hook is in, or the
// nearest directory named "hooks" above it: <module>/hooks/venv. Without
// one the hook runs as any script does (its "#!" line) and a warning says
// so once per hook. Global hooks have no venv, as in the established
// operator (their directory is not named hooks).
const (
	venvDir        = "venv"
	venvPython     = "bin/python3"
	venvConfigFile = "pyvenv.cfg"
	pythonHomeEnv  = "PYTHONHOME"
	virtualEnvEnv  = "VIRTUAL_ENV"
	pythonHookExt  = ".py"
)

// findVenv returns the venv of the Python hook at path, "" when it is not
// a Python hook or its module has no venv.
func findVenv(path string) string {
	if filepath.Ext(path) != pythonHookExt {
		return ""
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if filepath.Base(dir) == "hooks" {
			venv := filepath.Join(dir, venvDir)
			if executable(filepath.Join(venv, venvPython)) {
				return venv
			}
			return ""
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

// withVenv returns pr started by its module's venv Python when pr runs a
// Python hook of a module with a venv (see findVenv); any other process is
// returned as it is.
func (e *Runner) withVenv(pr Process) Process {
	if filepath.Ext(pr.Path) != pythonHookExt {
		return pr
	}
	venv := findVenv(pr.Path)
	if venv == "" {
		if _, warned := e.venvWarned.LoadOrStore(pr.Path, true); !warned {
			pr.Warnings.Warn("Python hook runs without a virtual environment: its module has no executable hooks/venv/bin/python3",
				slog.String(logkey.Hook, pr.Path))
		}
		return pr
	}
	env := append([]string(nil), pr.Env...)
	if _, err := os.Stat(filepath.Join(venv, venvConfigFile)); err == nil {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, pythonHomeEnv+"=") })
		env = setEnv(env, virtualEnvEnv, venv)
		env = setEnv(env, "PATH", filepath.Join(venv, "bin")+string(os.PathListSeparator)+pathOf(env))
	} else {
		env = setEnv(env, pythonHomeEnv, venv)
	}
	pr.Args = append([]string{pr.Path}, pr.Args...)
	pr.Path = filepath.Join(venv, venvPython)
	pr.Env = env
	return pr
}

// setEnv sets key to value in env, "KEY=value" entries: the last entry
// of a key is the one a process sees, so earlier ones are dropped.
func setEnv(env []string, key, value string) []string {
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
