package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lines(s string) []string { return splitLines(s) }

// numbered returns "l1".."ln", one a line.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	return b.String()
}

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{name: "equal", a: "a\nb\n", b: "a\nb\n", want: ""},
		{name: "both empty", want: ""},
		{
			name: "from nothing",
			b:    "a\nb\n",
			want: "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "to nothing",
			a:    "a\n",
			want: "--- old\n+++ new\n@@ -1 +0,0 @@\n-a\n",
		},
		{
			name: "a changed line keeps three lines of context",
			a:    numbered(10),
			b:    strings.Replace(numbered(10), "l5\n", "five\n", 1),
			want: "--- old\n+++ new\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+five\n l6\n l7\n l8\n",
		},
		{
			name: "a line added at the end",
			a:    numbered(5),
			b:    numbered(6),
			want: "--- old\n+++ new\n@@ -3,3 +3,4 @@\n l3\n l4\n l5\n+l6\n",
		},
		{
			name: "distant changes make two hunks",
			a:    numbered(20),
			b:    strings.Replace(strings.Replace(numbered(20), "l2\n", "two\n", 1), "l19\n", "nineteen\n", 1),
			want: "--- old\n+++ new\n@@ -1,5 +1,5 @@\n l1\n-l2\n+two\n l3\n l4\n l5\n" +
				"@@ -16,5 +16,5 @@\n l16\n l17\n l18\n-l19\n+nineteen\n l20\n",
		},
		{
			name: "changes six lines apart share a hunk",
			a:    numbered(12),
			b:    strings.Replace(strings.Replace(numbered(12), "l3\n", "three\n", 1), "l10\n", "ten\n", 1),
			want: "--- old\n+++ new\n@@ -1,12 +1,12 @@\n l1\n l2\n-l3\n+three\n l4\n l5\n l6\n l7\n l8\n l9\n-l10\n+ten\n l11\n l12\n",
		},
		{
			name: "a moved line is removed and added",
			a:    "a\nb\nc\n",
			b:    "b\nc\na\n",
			want: "--- old\n+++ new\n@@ -1,3 +1,3 @@\n-a\n b\n c\n+a\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unifiedDiff("old", "new", lines(tt.a), lines(tt.b))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\ngot:\n%s", diff, got)
			}
		})
	}
}

// TestUnifiedDiffLargeInput checks that a diff of two large texts with
// nothing in common removes every line of one and adds every line of the
// other.
func TestUnifiedDiffLargeInput(t *testing.T) {
	a, b := make([]string, 3000), make([]string, 3000)
	for i := range a {
		a[i], b[i] = fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
	}
	var gotA, gotB []string
	for _, l := range strings.Split(unifiedDiff("old", "new", a, b), "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			gotA = append(gotA, l[1:])
		case strings.HasPrefix(l, "+"):
			gotB = append(gotB, l[1:])
		}
	}
	if !cmp.Equal(a, gotA) || !cmp.Equal(b, gotB) {
		t.Errorf("the diff removes %d and adds %d lines, want all %d of each", len(gotA), len(gotB), len(a))
	}
}
