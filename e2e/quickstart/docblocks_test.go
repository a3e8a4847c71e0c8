package quickstart

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// docGlobs are the documents whose commands are checked: README.md and
// every page under docs/.
func docGlobs() []string { return []string{"README.md", "docs/*.md", "docs/security/*.md"} }

// notestMarker, on the line before a fence (blank lines between allowed),
// says why its commands are not run: they need a real cluster, a
// registry, an image build, or they illustrate output of modules the
// repository does not ship.
var notestMarker = regexp.MustCompile(`^<!-- notest: (.+?) -->$`)

// commandWord reports whether w starts the lines of an unlabelled fence
// that lists commands (a synopsis) rather than a layout, a diagram or a
// message.
func commandWord(w string) bool {
	return slices.Contains([]string{"addon-operator", "kubectl", "make", "helm", "docker", "go", "skopeo"}, w)
}

// blockKind is what a fence holds, as far as running it goes.
type blockKind int

const (
	// notCommands: YAML, Go, a layout, a diagram, a message.
	notCommands blockKind = iota
	// script: a sh or shell fence, typed as it stands.
	script
	// transcript: a console fence, or one with "$ " prompts: commands,
	// each followed by its output.
	transcript
	// synopsis: an unlabelled fence of command lines with placeholders.
	synopsis
)

func (k blockKind) String() string {
	return [...]string{"not commands", "script", "transcript", "synopsis"}[k]
}

// docBlock is one fenced block of a document.
type docBlock struct {
	Doc  string // the document's path from the repository's root
	Line int    // the fence's line, from 1
	Lang string
	Kind blockKind
	Text string // the lines between the fences, dedented to the fence's indent
	// NoTest is the reason of the notest marker before the fence.
	NoTest string
	// QuickStart: between the quick start's markers (README.md), which
	// TestQuickStart runs.
	QuickStart bool
}

// where names the block in failure messages.
func (b docBlock) where() string { return fmt.Sprintf("%s:%d", b.Doc, b.Line) }

// fence matches an opening or closing fence with its indent and language.
var fence = regexp.MustCompile("^( *)```(\\S*)\\s*$")

// docBlocks returns the fenced blocks of a document's text.
func docBlocks(doc, text string) ([]docBlock, error) {
	lines := strings.Split(text, "\n")
	var out []docBlock
	inQuickStart := false
	for i := 0; i < len(lines); i++ {
		switch {
		case strings.HasPrefix(lines[i], beginMarker):
			inQuickStart = true
		case strings.HasPrefix(lines[i], endMarker):
			inQuickStart = false
		}
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{Doc: doc, Line: i + 1, Lang: m[2], QuickStart: inQuickStart, NoTest: noTestReason(lines[:i])}
		var body []string
		for i++; ; i++ {
			if i == len(lines) {
				return nil, fmt.Errorf("%s: the fence of %s is not closed", b.where(), b.Lang)
			}
			if c := fence.FindStringSubmatch(lines[i]); len(c) == 3 && c[2] == "" {
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], m[1]))
		}
		b.Text = strings.Join(body, "\n") + "\n"
		b.Kind = kindOf(b.Lang, body)
		out = append(out, b)
	}
	return out, nil
}

// noTestReason is the reason of a notest marker ending before (blank
// lines aside), or "".
func noTestReason(before []string) string {
	for i := len(before) - 1; i >= 0; i-- {
		l := strings.TrimSpace(before[i])
		if l == "" {
			continue
		}
		if m := notestMarker.FindStringSubmatch(l); m != nil {
			return m[1]
		}
		return ""
	}
	return ""
}

// kindOf says what a fence of lang with body holds.
func kindOf(lang string, body []string) blockKind {
	switch lang {
	case "sh", "shell", "bash":
		return script
	case "console":
		return transcript
	case "":
	default:
		return notCommands
	}
	if slices.ContainsFunc(body, func(l string) bool { return strings.HasPrefix(l, "$ ") }) {
		return transcript
	}
	for _, l := range body {
		if f := strings.Fields(l); len(f) > 0 {
			if commandWord(f[0]) {
				return synopsis
			}
			return notCommands
		}
	}
	return notCommands
}

// repoDocs returns the blocks of every document, in path order.
func repoDocs(root string) ([]docBlock, error) {
	var out []docBlock
	for _, g := range docGlobs() {
		paths, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil, err
			}
			blocks, err := docBlocks(filepath.ToSlash(rel), string(data))
			if err != nil {
				return nil, err
			}
			out = append(out, blocks...)
		}
	}
	return out, nil
}

// command is one command of a transcript with the output the document
// shows after it.
type command struct {
	Line   string
	Output []string
}

// transcriptCommands splits a transcript into its commands: a "$ " line
// begins one, and lines after a line ending in "\", "&" or "|" continue
// it (a prompt's continuation); lines before the first prompt (comments)
// are left out.
func transcriptCommands(text string) []command {
	var out []command
	continued := false
	for l := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case continued:
			c := &out[len(out)-1]
			c.Line += "\n" + l
		case strings.HasPrefix(l, "$ "):
			out = append(out, command{Line: strings.TrimPrefix(l, "$ ")})
		case len(out) > 0:
			c := &out[len(out)-1]
			c.Output = append(c.Output, l)
			continue
		default:
			continue
		}
		t := strings.TrimSpace(l)
		continued = strings.HasSuffix(t, `\`) || strings.HasSuffix(t, "&") || strings.HasSuffix(t, "|")
	}
	return out
}

// keyLine is the line of a command's shown output that the real output
// must hold: its first, unless the document shows none or elides it.
func (c command) keyLine() (string, bool) {
	if len(c.Output) == 0 || strings.TrimSpace(c.Output[0]) == "..." || strings.TrimSpace(c.Output[0]) == "" {
		return "", false
	}
	return c.Output[0], true
}

// wantsFailure: the document shows the command failing.
func (c command) wantsFailure() bool {
	k, ok := c.keyLine()
	return ok && (strings.HasPrefix(k, "Error: ") || strings.HasPrefix(k, "error: "))
}

// holdsKeyLine reports whether out holds a line like key: the same fields
// for a table's header (all upper case) or a short line, else the same
// first field and as many fields (the values differ from cluster to
// cluster: versions, ages, commits).
func holdsKeyLine(out, key string) bool {
	want := strings.Fields(key)
	header := strings.ToUpper(key) == key
	for l := range strings.SplitSeq(out, "\n") {
		got := strings.Fields(l)
		if slices.Equal(got, want) {
			return true
		}
		if !header && len(want) > 1 && len(got) == len(want) && got[0] == want[0] {
			return true
		}
	}
	return false
}
