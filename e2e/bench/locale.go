package bench

import (
	"fmt"
	"os"
	"strings"
)

// UseLocale sets the locale of every process the bench starts (the
// operators and, through them, their hooks) to LANG=lang, and returns how
// to name it in a report. An empty lang is the operator's image: no locale
// variable at all, so hooks run in the C locale. Whatever locale the
// caller's environment has (LANG, LANGUAGE, LC_ALL, LC_*) is dropped
// first.
//
// Hooks' figures depend on it: every bash and jq start loads the locale
// first. The bench's bash admission hook costs 10-15 % more CPU a run
// under C.UTF-8 than under no locale (docs/benchmarks.md).
func UseLocale(lang string) (string, error) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if isLocaleVar(name) {
			if err := os.Unsetenv(name); err != nil {
				return "", fmt.Errorf("unset %s: %w", name, err)
			}
		}
	}
	if lang == "" {
		return "none (the image's)", nil
	}
	if err := os.Setenv("LANG", lang); err != nil {
		return "", fmt.Errorf("set LANG: %w", err)
	}
	return "LANG=" + lang, nil
}

// isLocaleVar reports whether name is one of the variables setlocale(3)
// reads.
func isLocaleVar(name string) bool {
	return name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_")
}
