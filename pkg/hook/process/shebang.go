package process

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// envPath is the env(1) that scripts name in "#!/usr/bin/env NAME".
const envPath = "/usr/bin/env"

// shebangMax is how much of a script's first line the kernel reads for
// its "#!" line (BINPRM_BUF_SIZE).
const shebangMax = 256

// interpreter is the program a script's "#!/usr/bin/env NAME" line
// starts, found as env would find it.
type interpreter struct {
	name string // NAME, env's argv[0] for it
	path string // where NAME is on the run's PATH
}

// readEnvShebang returns the NAME of script path's "#!/usr/bin/env NAME"
// line (see envShebang).
func readEnvShebang(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	head := make([]byte, shebangMax)
	n, err := io.ReadFull(f, head)
	if err != nil && n == 0 {
		return "", false
	}
	return envShebang(head[:n])
}

// interpreterKey is a script and the PATH its interpreter is looked up on.
type interpreterKey struct{ script, path string }

// interpreterEntry is what a script's first line named (name, empty when
// it is no "#!/usr/bin/env NAME" line) and where NAME was found, with the
// script's size and modification time when it was read.
type interpreterEntry struct {
	size    int64
	modTime time.Time
	name    string
	found   string
}

// interpreterOf returns the interpreter of script when its first line is
// exactly "#!/usr/bin/env NAME" (one plain NAME: no option, no VAR=value,
// no slash, no carriage return) and NAME is an executable file on the PATH
// of env, the run's environment. Starting that interpreter with the
// script's path and arguments is what the kernel and env would do, less
// one program start: env's exec cost 0.75 ms of CPU of the 4.3 ms a bash
// hook running jq took (docs/benchmarks.md). ok is false for anything
// else, which the kernel then starts as it would.
//
// What it finds is remembered per script and PATH: a run stats the script,
// and the interpreter found, instead of reading the script and searching
// PATH. The script is read again once its size or modification time
// changed, PATH searched again once the interpreter found is no executable
// file any more.
func (e *Runner) interpreterOf(script string, env []string) (interpreter, bool) {
	st, err := os.Stat(script)
	if err != nil {
		return interpreter{}, false
	}
	key := interpreterKey{script: script, path: pathOf(env)}
	var known interpreterEntry
	if v, ok := e.interpreters.Load(key); ok {
		known, _ = v.(interpreterEntry)
	}
	c := known
	if c.size != st.Size() || !c.modTime.Equal(st.ModTime()) || c.modTime.IsZero() {
		c = interpreterEntry{size: st.Size(), modTime: st.ModTime()}
		c.name, _ = readEnvShebang(script)
	}
	if c.name != "" && (c.found == "" || !executable(c.found)) {
		c.found, _ = lookPath(c.name, key.path)
	}
	if c != known {
		e.interpreters.Store(key, c)
	}
	if c.name == "" || c.found == "" {
		return interpreter{}, false
	}
	return interpreter{name: c.name, path: c.found}, true
}

// envShebang returns NAME when head starts with the line
// "#!/usr/bin/env NAME", blanks around the words allowed.
func envShebang(head []byte) (string, bool) {
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(line, '\n')
	if end < 0 {
		return "", false // longer than the kernel reads, or no script after it
	}
	fields := strings.FieldsFunc(string(line[:end]), func(r rune) bool { return r == ' ' || r == '\t' })
	if len(fields) != 2 || fields[0] != envPath {
		return "", false
	}
	name := fields[1]
	if strings.HasPrefix(name, "-") || strings.ContainsAny(name, "=/\r") {
		return "", false
	}
	return name, true
}

// pathOf returns the PATH of env, the last one as the process gets it.
func pathOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds name in the directories of list (an empty entry is the
// working directory) as env's execvp does: the first regular file with an
// execute bit.
func lookPath(name, list string) (string, bool) {
	for _, dir := range filepath.SplitList(list) {
		p := filepath.Join(dir, name)
		if !strings.ContainsRune(p, filepath.Separator) {
			p = "./" + p // a path, so that nothing looks the name up again
		}
		if executable(p) {
			return p, true
		}
	}
	return "", false
}

// executable reports whether path is a regular file with an execute bit.
func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
