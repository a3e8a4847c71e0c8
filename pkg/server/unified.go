package server

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines surround a change in a hunk.
const diffContext = 3

// maxDiffCells bounds the LCS table of one diff; past it, the differing
// middle of the two texts is shown as replaced whole.
const maxDiffCells = 4 << 20

// edit is one line of an edit script: ' ' kept, '-' removed, '+' added.
type edit struct {
	op   byte
	line string
}

// unifiedDiff returns the unified diff turning a into b, with headers naming
// from and to, or "" when they are equal.
func unifiedDiff(from, to string, a, b []string) string {
	script := editScript(a, b)
	hunks := formatHunks(script)
	if len(hunks) == 0 {
		return ""
	}
	return "--- " + from + "\n+++ " + to + "\n" + strings.Join(hunks, "\n") + "\n"
}

// editScript returns a shortest edit script from a to b: the common prefix
// and suffix are kept, the middle is aligned by a longest common
// subsequence. Removals come before additions within a change.
func editScript(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	script := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		script = append(script, edit{' ', l})
	}
	script = append(script, middleScript(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		script = append(script, edit{' ', l})
	}
	return script
}

// middleScript aligns a and b by a longest common subsequence.
func middleScript(a, b []string) []edit {
	script := make([]edit, 0, len(a)+len(b))
	if (len(a)+1)*(len(b)+1) > maxDiffCells {
		for _, l := range a {
			script = append(script, edit{'-', l})
		}
		for _, l := range b {
			script = append(script, edit{'+', l})
		}
		return script
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			script = append(script, edit{' ', a[i]})
			i++
			j++
		case j == len(b) || (i < len(a) && lcs[i+1][j] >= lcs[i][j+1]):
			script = append(script, edit{'-', a[i]})
			i++
		default:
			script = append(script, edit{'+', b[j]})
			j++
		}
	}
	return script
}

// formatHunks groups an edit script into hunks with diffContext lines of
// context, merging hunks whose context would overlap.
func formatHunks(script []edit) []string {
	// pos[k] is the number of a and b lines before script[k].
	pos := make([][2]int, len(script)+1)
	for k, e := range script {
		pos[k+1] = pos[k]
		if e.op != '+' {
			pos[k+1][0]++
		}
		if e.op != '-' {
			pos[k+1][1]++
		}
	}
	var out []string
	for k := 0; k < len(script); {
		first := nextChange(script, k)
		if first == len(script) {
			break
		}
		last := first
		for next := nextChange(script, last+1); next < len(script) && next-last-1 <= 2*diffContext; next = nextChange(script, last+1) {
			last = next
		}
		start, stop := max(0, first-diffContext), min(len(script), last+diffContext+1)
		out = append(out, fmt.Sprintf("@@ -%s +%s @@",
			hunkRange(pos[start][0], pos[stop][0]-pos[start][0]), hunkRange(pos[start][1], pos[stop][1]-pos[start][1])))
		for _, e := range script[start:stop] {
			out = append(out, string(e.op)+e.line)
		}
		k = stop
	}
	return out
}

// nextChange returns the index of the first change at or after k, or
// len(script).
func nextChange(script []edit, k int) int {
	for k < len(script) && script[k].op == ' ' {
		k++
	}
	return k
}

// hunkRange formats a hunk's line range as diff(1) does: 1-based start,
// and for an empty range the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	default:
		return fmt.Sprintf("%d,%d", start+1, n)
	}
}
