package process

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func writeExecutable(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func tailOf(from, to int) string {
	lines := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		lines = append(lines, "line"+strconv.Itoa(i))
	}
	return strings.Join(lines, "\n")
}

func TestTail(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{name: "empty", want: ""},
		{name: "few lines", lines: []string{"a", "b"}, want: "a\nb"},
		{name: "long line cut at a rune", lines: []string{strings.Repeat("é", 3000) + "x"}, want: strings.Repeat("é", 2047) + "x"},
		{name: "total cut at a rune", lines: []string{strings.Repeat("é", 1500) + "y", strings.Repeat("é", 1500) + "x"},
			want: strings.Repeat("é", 546) + "y\n" + strings.Repeat("é", 1500) + "x"},
		{name: "last 20 lines", lines: strings.Split(tailOf(1, 25), "\n"), want: tailOf(6, 25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl tail
			for _, l := range tt.lines {
				tl.add(l)
			}
			if got := tl.String(); got != tt.want {
				t.Errorf("tail = %q (%d bytes), want %d bytes", got, len(got), len(tt.want))
			}
		})
	}
}

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
	e := &Runner{}
	in, ok := e.interpreterOf(script, env)
	if !ok || in != (interpreter{name: "myinterp", path: want}) {
		t.Errorf("interpreterOf = %+v, %v; want myinterp at %s", in, ok, want)
	}
	if _, ok := e.interpreterOf(script, []string{"PATH=" + first}); ok {
		t.Errorf("found an interpreter where only a non-executable file is")
	}
}

// A non-Python hook next to a module's venv is never looked at.
func TestFindVenvOnlyForPythonHooks(t *testing.T) {
	module := t.TempDir()
	writeExecutable(t, module, "hooks/venv/bin/python3", "#!/bin/sh\n", 0o700)
	if got := findVenv(filepath.Join(module, "hooks", "check.py")); got != filepath.Join(module, "hooks", "venv") {
		t.Errorf("findVenv of a Python hook = %q, want the module's venv", got)
	}
	if got := findVenv(writeExecutable(t, module, "hooks/check.sh", "#!/bin/sh\n", 0o700)); got != "" {
		t.Errorf("a shell hook got a venv: %q", got)
	}
}
