package quickstart

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// blockTimeout bounds one block or command of the documents; their waits
// carry shorter timeouts of their own.
const blockTimeout = 6 * time.Minute

// lastDoc reports whether doc runs after the others: deploying.md applies
// deploy/, whose ConfigMap and Deployment land in the namespace of the
// running operator.
func lastDoc(doc string) bool { return doc == "docs/deploying.md" }

// TestDocBlocksClassified: every block of commands in README.md and docs/
// is run (by TestQuickStart: the quick start's, then the others) or
// carries a notest marker saying why not; a synopsis cannot run, so it
// must say so; a marker stands before a block of commands only.
func TestDocBlocksClassified(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := repoDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, b := range blocks {
		switch {
		case b.Kind == notCommands && b.NoTest != "":
			t.Errorf("%s: a notest marker before a %s block, which holds no commands", b.where(), b.Lang)
		case b.Kind == notCommands:
			counts["no commands"]++
		case b.NoTest != "":
			counts["not run: "+b.Kind.String()]++
		case b.QuickStart:
			counts["run: quick start"]++
		case b.Kind == synopsis:
			t.Errorf("%s: a synopsis (command lines with placeholders) without a notest marker; make it runnable (```sh) or mark it", b.where())
		default:
			counts["run: "+b.Kind.String()]++
		}
	}
	t.Logf("%d blocks: %v", len(blocks), counts)
	if counts["run: script"]+counts["run: transcript"] == 0 {
		t.Error("no block of the documents runs beyond the quick start")
	}
}

// TestDocBlocks checks the parser on a document of every kind of block.
func TestDocBlocks(t *testing.T) {
	doc := "```sh\nmake run\n```\n<!-- notest: needs a registry -->\n\n```sh\ndocker push x\n```\n" +
		"```\n$ addon-operator version\naddon-operator dev\n  commit: x\n```\n" +
		"```\naddon-operator live queue|module NAME\n```\n```\nmodules/\n  values.yaml\n```\n" +
		"   ```yaml\n   a: 1\n   ```\n"
	got, err := docBlocks("d.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	kinds, reasons := make([]string, 0, len(got)), make([]string, 0, len(got))
	for _, b := range got {
		kinds, reasons = append(kinds, b.Kind.String()), append(reasons, b.NoTest)
	}
	if want := []string{"script", "script", "transcript", "synopsis", "not commands", "not commands"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds = %q, want %q", kinds, want)
	}
	if want := []string{"", "needs a registry", "", "", "", ""}; !slices.Equal(reasons, want) {
		t.Errorf("notest reasons = %q, want %q", reasons, want)
	}
	if got[5].Text != "a: 1\n" {
		t.Errorf("an indented block's text = %q, want it dedented", got[5].Text)
	}
	if _, err := docBlocks("d.md", "```sh\nopen\n"); err == nil {
		t.Error("an unclosed fence gave blocks")
	}
}

// TestTranscriptCommands: prompts begin commands, a trailing \ or &
// continues one, output is kept with its command, comments before the
// first prompt are left out.
func TestTranscriptCommands(t *testing.T) {
	got := transcriptCommands("# wait:\n$ kubectl wait a \\\n    --for=x &\n  wait -n\n$ kubectl get m\nNAME  PHASE\nm     Ready\n$ echo $?\n1\n")
	want := []command{
		{Line: "kubectl wait a \\\n    --for=x &\n  wait -n"},
		{Line: "kubectl get m", Output: []string{"NAME  PHASE", "m     Ready"}},
		{Line: "echo $?", Output: []string{"1"}},
	}
	if len(got) != len(want) {
		t.Fatalf("commands = %q, want %q", got, want)
	}
	for i := range want {
		if got[i].Line != want[i].Line || !slices.Equal(got[i].Output, want[i].Output) {
			t.Errorf("command %d = %q, want %q", i, got[i], want[i])
		}
	}
	for _, c := range []struct {
		out, key string
		want     bool
	}{
		{"NAME   PHASE\nx Ready", "NAME PHASE", true},
		{"NAME   PHASE   AGE\nx Ready", "NAME PHASE", false},
		{"addon-operator dev\n", "addon-operator v1.2.3", true},
		{"addon-operator dev extra\n", "addon-operator v1.2.3", false},
		{"Failed\n", "Ready", false},
	} {
		if got := holdsKeyLine(c.out, c.key); got != c.want {
			t.Errorf("holdsKeyLine(%q, %q) = %v, want %v", c.out, c.key, got, c.want)
		}
	}
}

// runDocs runs the documents' blocks that are neither the quick start nor
// marked notest, in order per document, in dir (the repository's copy)
// with the quick start's environment, operator and control plane.
func runDocs(t *testing.T, dir string, env []string) {
	t.Helper()
	blocks, err := repoDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	byDoc := map[string][]docBlock{}
	for _, b := range blocks {
		if b.QuickStart || b.NoTest != "" || (b.Kind != script && b.Kind != transcript) {
			continue
		}
		if byDoc[b.Doc] == nil {
			docs = append(docs, b.Doc)
		}
		byDoc[b.Doc] = append(byDoc[b.Doc], b)
	}
	slices.SortStableFunc(docs, func(a, b string) int {
		return boolInt(lastDoc(a)) - boolInt(lastDoc(b))
	})
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			start := time.Now()
			for _, b := range byDoc[doc] {
				if b.Kind == script {
					runScript(t, dir, env, b)
				} else {
					runTranscript(t, dir, env, b)
				}
			}
			t.Logf("%s: %d blocks in %s", doc, len(byDoc[doc]), time.Since(start).Round(time.Millisecond))
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// docsEnv is the environment of the documents' commands: the quick
// start's second shell (KUBECONFIG exported), with the operator's binary
// first on PATH as a user who installed it has it, and its debug socket
// named as the operator's pod names it (ADDON_OPERATOR_DEBUG_SOCKET), so
// that live commands reach the running operator as written.
func docsEnv(dir string, env []string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
			continue
		}
		out = append(out, "PATH="+filepath.Join(dir, "bin")+":"+strings.TrimPrefix(kv, "PATH="))
	}
	return append(out, "KUBECONFIG="+filepath.Join(dir, ".cluster", "kubeconfig"),
		"ADDON_OPERATOR_DEBUG_SOCKET="+filepath.Join(dir, ".tmp", "debug.socket"))
}

// shell runs text in bash in dir and returns its output and exit code.
func shell(t *testing.T, dir string, env []string, text string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", text)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit) && ctx.Err() == nil:
		return string(out), exit.ExitCode()
	default:
		t.Fatalf("%s: %v\n%s", text, err, out)
		return "", 0
	}
}

// runScript runs a sh block as one script that stops at the first
// failing command, as a reader pasting it would notice.
func runScript(t *testing.T, dir string, env []string, b docBlock) {
	t.Helper()
	out, code := shell(t, dir, env, "set -eu\n"+b.Text)
	t.Logf("%s:\n%s%s", b.where(), b.Text, out)
	if code != 0 {
		t.Errorf("%s: exit code %d, want 0", b.where(), code)
	}
}

// runTranscript runs each command of a transcript, each in its own
// shell: it must fail when the document shows an error and succeed
// otherwise, and its output must hold the shown output's key line;
// "echo $?" checks the previous command's exit code.
func runTranscript(t *testing.T, dir string, env []string, b docBlock) {
	t.Helper()
	prev := 0
	for _, c := range transcriptCommands(b.Text) {
		key, hasKey := c.keyLine()
		if c.Line == "echo $?" {
			if hasKey && key != strconv.Itoa(prev) {
				t.Errorf("%s: the exit code before echo $? is %d, the document shows %s", b.where(), prev, key)
			}
			continue
		}
		out, code := shell(t, dir, env, c.Line)
		t.Logf("%s: $ %s\n%s", b.where(), c.Line, out)
		prev = code
		switch {
		case c.wantsFailure() && code == 0:
			t.Errorf("%s: %q succeeded, the document shows it failing", b.where(), c.Line)
		case !c.wantsFailure() && code != 0 && !followedByExitCode(b.Text, c):
			t.Errorf("%s: %q: exit code %d, want 0", b.where(), c.Line, code)
		}
		if hasKey && !holdsKeyLine(out, key) {
			t.Errorf("%s: the output of %q lacks a line like %q", b.where(), c.Line, key)
		}
	}
}

// followedByExitCode: the transcript shows c's exit code with echo $?.
func followedByExitCode(text string, c command) bool {
	cmds := transcriptCommands(text)
	i := slices.IndexFunc(cmds, func(x command) bool { return x.Line == c.Line })
	return i >= 0 && i+1 < len(cmds) && cmds[i+1].Line == "echo $?"
}
