package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvShebang(t *testing.T) {
	tests := []struct {
		head string
		want string // "" when the kernel starts the script itself
	}{
		{"#!/usr/bin/env bash\necho\n", "bash"},
		{"#! /usr/bin/env  python3 \t\nprint()\n", "python3"},
		{"#!/bin/bash\n", ""},
		{"#!/usr/bin/env -S bash -e\n", ""}, // options
		{"#!/usr/bin/env bash -e\n", ""},    // env would look for "bash -e"
		{"#!/usr/bin/env FOO=1 bash\n", ""}, // an assignment
		{"#!/usr/bin/env ./bash\n", ""},     // a path: env execs it as is
		{"#!/usr/bin/env bash\r\n", ""},     // CRLF: the kernel's env gets "bash\r"
		{"#!/usr/bin/env\n", ""},
		{"#!/usr/bin/env bash", ""}, // no newline within what the kernel reads
		{"\x7fELF\x02\x01", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := envShebang([]byte(tt.head))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("envShebang(%q) = %q, %v; want %q", tt.head, got, ok, tt.want)
		}
	}
}

// writeExecutable writes an executable file into dir.
func writeExecutable(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// The interpreter is looked up on the run's PATH, as env would: the
// first executable regular file of that name, skipping others.
func TestEnvInterpreterUsesTheRunsPath(t *testing.T) {
	first, second, third := t.TempDir(), t.TempDir(), t.TempDir()
	writeExecutable(t, first, "myinterp", "not executable", 0o600)
	if err := os.Mkdir(filepath.Join(second, "myinterp"), 0o700); err != nil {
		t.Fatal(err)
	}
	want := writeExecutable(t, third, "myinterp", "#!/bin/sh\n", 0o700)
	script := writeExecutable(t, t.TempDir(), "hook", "#!/usr/bin/env myinterp\necho\n", 0o700)

	env := []string{"PATH=/nowhere", "HOME=/root", "PATH=" + strings.Join([]string{first, second, third}, ":")}
	e := &Executor{}
	in, ok := e.interpreterOf(script, env)
	if !ok || in != (interpreter{name: "myinterp", path: want}) {
		t.Errorf("interpreterOf = %+v, %v; want myinterp at %s", in, ok, want)
	}
	if _, ok := e.interpreterOf(script, []string{"PATH=" + first}); ok {
		t.Errorf("found an interpreter where only a non-executable file is")
	}
}

// A hook whose "#!/usr/bin/env NAME" the operator starts itself gets what
// env would give it: NAME as argv[0], the hook's path and its arguments.
func TestEnvShebangHookRunsAsWithEnv(t *testing.T) {
	bin := t.TempDir()
	writeExecutable(t, bin, "myinterp", "#!/bin/sh\necho \"interp $*\"\n", 0o700)
	hookDir := t.TempDir()
	hook := writeExecutable(t, hookDir, "hook", "#!/usr/bin/env myinterp\n", 0o700)
	e := &Executor{Env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}
	out, err := e.Config(t.Context(), hook)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "interp "+hook+" --config"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}

	// The script rewritten: read again, not taken from what was remembered.
	writeExecutable(t, hookDir, "hook", "#!/bin/sh\necho direct\n", 0o700)
	if out, err := e.Config(t.Context(), hook); err != nil || strings.TrimSpace(string(out)) != "direct" {
		t.Errorf("rewritten hook: output %q, err %v; want direct", out, err)
	}
	writeExecutable(t, hookDir, "hook", "#!/usr/bin/env myinterp\n", 0o700)

	// Not found: started by the kernel, so env reports it, as before.
	e.Env = []string{"PATH=" + t.TempDir()}
	if _, err := e.Config(t.Context(), hook); err == nil {
		t.Errorf("a hook whose interpreter is nowhere ran")
	}
}
