package catalogue

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// repoDir returns the repository's root, found from this file.
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// harness runs the operator binary with the repository's modules/ and
// global-hooks/ in a namespace of its own.
type harness struct {
	*operatortest.Harness
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{operatortest.New(t, cp, bin)}
}

// start runs the operator with short retry delays; env holds extra
// environment variables (KEY=value).
func (h *harness) start(env ...string) {
	h.T.Helper()
	root := repoDir()
	// The hooks see only the KUBERNETES_VERSION a test gives.
	h.Start(operatortest.Options{
		ModulesDir:     filepath.Join(root, "modules"),
		GlobalHooksDir: filepath.Join(root, "global-hooks"),
		Args:           []string{"--retry-delay=200ms", "--retry-max-delay=2s"},
		Env:            append(withoutEnv(os.Environ(), "KUBERNETES_VERSION"), env...),
	})
	h.runWorkloads()
}

// withoutEnv drops the variables named from env.
func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// failures returns the errors of the failed tasks and module runs logged
// so far, except those containing one of the expected strings.
func (h *harness) failures(expected ...string) []string {
	var out []string
next:
	for _, l := range h.Lines() {
		if l.Msg != "task failed, will retry" && l.Msg != "module run failed, will retry" {
			continue
		}
		msg := l.Attr("error")
		for _, e := range expected {
			if strings.Contains(msg, e) {
				continue next
			}
		}
		out = append(out, msg)
	}
	return out
}

// baseURL waits for the operator's HTTP listener and returns its URL.
func (h *harness) baseURL() string {
	h.T.Helper()
	addr := ""
	h.Poll("the HTTP listener", func() bool {
		for _, l := range h.Lines() {
			if l.Msg == "http server listening" {
				addr = l.Attr("name")
			}
		}
		return addr != ""
	})
	return "http://" + addr
}

// httpGet returns the body of a GET of url, failing the test unless it
// answers 200.
func (h *harness) httpGet(url string) string {
	h.T.Helper()
	code, body, err := operatortest.HTTPGet(h.T, url)
	if err != nil || code != http.StatusOK {
		h.T.Fatalf("GET %s: %d, %v: %s", url, code, err, body)
	}
	return body
}
