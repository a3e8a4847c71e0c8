package hook

import (
	"os"
	"strings"
	"testing"
)

// A hook whose "#!/usr/bin/env NAME" the operator starts itself gets what
// env would give it: NAME as argv[0], the hook's path and its arguments.
func TestEnvShebangHookRunsAsWithEnv(t *testing.T) {
	bin := t.TempDir()
	writeVenvFile(t, bin, "myinterp", "#!/bin/sh\necho \"interp $*\"\n")
	hookDir := t.TempDir()
	hook := writeVenvFile(t, hookDir, "hook", "#!/usr/bin/env myinterp\n")
	e := &Executor{Env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}
	out, err := e.Config(t.Context(), hook)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "interp "+hook+" --config"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}

	// The script rewritten: read again, not taken from what was remembered.
	writeVenvFile(t, hookDir, "hook", "#!/bin/sh\necho direct\n")
	if out, err := e.Config(t.Context(), hook); err != nil || strings.TrimSpace(string(out)) != "direct" {
		t.Errorf("rewritten hook: output %q, err %v; want direct", out, err)
	}
	writeVenvFile(t, hookDir, "hook", "#!/usr/bin/env myinterp\n")

	// Not found: started by the kernel, so env reports it, as before.
	e.Env = []string{"PATH=" + t.TempDir()}
	if _, err := e.Config(t.Context(), hook); err == nil {
		t.Errorf("a hook whose interpreter is nowhere ran")
	}
}
