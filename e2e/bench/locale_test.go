package bench

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestUseLocale(t *testing.T) {
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("LC_NUMERIC", "de_DE.UTF-8")
	t.Setenv("LANGUAGE", "de")
	t.Setenv("BENCH_KEEP", "kept")

	name, err := UseLocale("")
	if err != nil {
		t.Fatal(err)
	}
	if name != "none (the image's)" {
		t.Errorf("name = %q", name)
	}
	env := childEnv(t)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); isLocaleVar(k) {
			t.Errorf("a started process still has %s", kv)
		}
	}
	if !slices.Contains(env, "BENCH_KEEP=kept") {
		t.Errorf("other variables must be kept: %q", env)
	}

	t.Setenv("LC_CTYPE", "de_DE.UTF-8")
	name, err = UseLocale("C.UTF-8")
	if err != nil {
		t.Fatal(err)
	}
	if name != "LANG=C.UTF-8" {
		t.Errorf("name = %q", name)
	}
	env = childEnv(t)
	if !slices.Contains(env, "LANG=C.UTF-8") || slices.Contains(env, "LC_CTYPE=de_DE.UTF-8") {
		t.Errorf("want LANG=C.UTF-8 and no LC_CTYPE, got %q", env)
	}
}

// childEnv returns the environment a process started now gets.
func childEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "env").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestIsLocaleVar(t *testing.T) {
	for name, want := range map[string]bool{
		"LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_MESSAGES": true,
		"LANGX": false, "PATH": false, "ALC_X": false,
	} {
		if got := isLocaleVar(name); got != want {
			t.Errorf("isLocaleVar(%q) = %v, want %v", name, got, want)
		}
	}
}
