package server

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffContext is how many unchanged lines surround a change in a hunk.
const diffContext = 3

// unifiedDiff returns the unified diff turning a into b, with headers naming
// from and to, or "" when they are equal. Lines carry no newline.
func unifiedDiff(from, to string, a, b []string) string {
	var out strings.Builder
	// Writing to a strings.Builder cannot fail.
	_ = difflib.WriteUnifiedDiff(&out, difflib.UnifiedDiff{
		A: withNewlines(a), B: withNewlines(b), FromFile: from, ToFile: to, Context: diffContext,
	})
	return out.String()
}

func withNewlines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l + "\n"
	}
	return out
}
