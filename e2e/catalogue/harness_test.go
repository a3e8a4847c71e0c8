package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitTimeout bounds every wait for the operator to do something.
const waitTimeout = 90 * time.Second

// repoDir returns the repository's root, found from this file.
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// harness runs the operator binary with the repository's modules/ and
// global-hooks/ in a namespace of its own.
type harness struct {
	t      *testing.T
	ns     string
	dir    string // the operator's log and --tmp-dir
	client kubernetes.Interface
	proc   *exec.Cmd
	logs   string // file with the operator's JSON log lines
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, ns: cp.Namespace(t), dir: dir, client: cp.Clientset(t), logs: filepath.Join(dir, "operator.log")}
	t.Cleanup(h.stop)
	return h
}

// setConfig creates or replaces the operator's ConfigMap data.
func (h *harness) setConfig(data map[string]string) {
	h.t.Helper()
	cms := h.client.CoreV1().ConfigMaps(h.ns)
	cm, err := cms.Get(h.t.Context(), "addon-operator", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "addon-operator"}, Data: data}
		if _, err := cms.Create(h.t.Context(), cm, metav1.CreateOptions{}); err != nil {
			h.t.Fatalf("create ConfigMap: %v", err)
		}
		return
	}
	if err != nil {
		h.t.Fatalf("get ConfigMap: %v", err)
	}
	cm.Data = data
	if _, err := cms.Update(h.t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		h.t.Fatalf("update ConfigMap: %v", err)
	}
}

// start runs the operator with short retry delays; env holds extra
// environment variables (KEY=value).
func (h *harness) start(env ...string) {
	h.t.Helper()
	logs, err := os.OpenFile(h.logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = logs.Close() }()
	root := repoDir()
	// The operator outlives t.Context(): stop() ends it from a cleanup.
	cmd := exec.CommandContext(context.WithoutCancel(h.t.Context()), bin, "start",
		"--modules-dir", filepath.Join(root, "modules"),
		"--global-hooks-dir", filepath.Join(root, "global-hooks"),
		"--namespace", h.ns,
		"--kube-config", cp.Kubeconfig,
		"--retry-delay=200ms", "--retry-max-delay=2s", "--log-type=json", "--log-level=debug",
		"--tmp-dir", filepath.Join(h.dir, "tmp"),
		// Tests run operators side by side: no fixed port or socket.
		"--listen-address=127.0.0.1:0", "--debug-socket", filepath.Join(h.dir, "debug.socket"),
	)
	cmd.Env = append(withoutEnv(os.Environ(), "KUBERNETES_VERSION", "PATH"), "PATH="+stubDir+":"+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start operator: %v", err)
	}
	h.proc = cmd
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

// stop sends SIGTERM and waits for the operator to exit; the log is shown
// when the test failed.
func (h *harness) stop() {
	if h.proc == nil {
		return
	}
	_ = h.proc.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- h.proc.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			h.t.Errorf("operator exited with %v after SIGTERM", err)
		}
	case <-time.After(waitTimeout):
		_ = h.proc.Process.Kill()
		h.t.Errorf("operator did not stop within %s of SIGTERM", waitTimeout)
	}
	h.proc = nil
	if h.t.Failed() {
		data, _ := os.ReadFile(h.logs)
		h.t.Logf("operator log:\n%s", data)
	}
}

// logLine is one JSON log line of the operator.
type logLine map[string]any

func (h *harness) logLines() []logLine {
	data, err := os.ReadFile(h.logs)
	if err != nil {
		h.t.Fatal(err)
	}
	var lines []logLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			lines = append(lines, l)
		}
	}
	return lines
}

// countLog counts log lines with the message whose attributes contain the
// wanted strings.
func (h *harness) countLog(msg string, want map[string]string) int {
	n := 0
	for _, l := range h.logLines() {
		if l["msg"] != msg {
			continue
		}
		ok := true
		for k, v := range want {
			if got := fmt.Sprint(l[k]); !strings.Contains(got, v) {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// waitLog waits until at least n lines match countLog's arguments.
func (h *harness) waitLog(n int, msg string, want map[string]string) {
	h.t.Helper()
	h.poll(fmt.Sprintf("%d log lines %q with %v", n, msg, want), func() bool { return h.countLog(msg, want) >= n })
}

// failures returns the errors of the failed tasks and module runs logged
// so far, except those containing one of the expected strings.
func (h *harness) failures(expected ...string) []string {
	var out []string
next:
	for _, l := range h.logLines() {
		if l["msg"] != "task failed, will retry" && l["msg"] != "module run failed, will retry" {
			continue
		}
		msg := fmt.Sprint(l["error"])
		for _, e := range expected {
			if strings.Contains(msg, e) {
				continue next
			}
		}
		out = append(out, msg)
	}
	return out
}

// poll calls cond until it holds or waitTimeout passes.
func (h *harness) poll(what string, cond func() bool) {
	h.t.Helper()
	poll(h.t, what, cond)
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		}
		<-tick.C
	}
}

// configMapData returns the data of a ConfigMap in the operator's
// namespace, nil when it does not exist.
func (h *harness) configMapData(name string) map[string]string {
	h.t.Helper()
	cm, err := h.client.CoreV1().ConfigMaps(h.ns).Get(h.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm.Data
}

// baseURL waits for the operator's HTTP listener and returns its URL.
func (h *harness) baseURL() string {
	h.t.Helper()
	addr := ""
	h.poll("the HTTP listener", func() bool {
		for _, l := range h.logLines() {
			if l["msg"] == "http server listening" {
				addr = fmt.Sprint(l["name"])
			}
		}
		return addr != ""
	})
	return "http://" + addr
}

// httpGet returns the body of a GET of url, failing the test unless it
// answers 200.
func (h *harness) httpGet(url string) string {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET %s: %s, %v: %s", url, resp.Status, err, body)
	}
	return string(body)
}

// releaseRevision returns the latest revision of a release, 0 if none, from
// Helm's storage Secrets.
func (h *harness) releaseRevision(name string) int {
	h.t.Helper()
	list, err := h.client.CoreV1().Secrets(h.ns).List(h.t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		h.t.Fatalf("list release secrets: %v", err)
	}
	rev := 0
	for i := range list.Items {
		var v int
		if _, err := fmt.Sscan(list.Items[i].Labels["version"], &v); err == nil && v > rev {
			rev = v
		}
	}
	return rev
}
