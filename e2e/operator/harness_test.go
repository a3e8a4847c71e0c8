package operator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
const waitTimeout = 60 * time.Second

// harness runs the operator binary over a copy of e2e/testdata/operator in
// a namespace of its own.
type harness struct {
	t      *testing.T
	ns     string
	dir    string // modules/ and global-hooks/ live here
	trace  string
	client kubernetes.Interface
	proc   *exec.Cmd
	logs   string // file with the operator's JSON log lines, all runs
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "operator")
	if out, err := exec.CommandContext(t.Context(), "cp", "-a", src+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy fixture: %v: %s", err, out)
	}
	h := &harness{
		t: t, ns: cp.Namespace(t), dir: dir, client: cp.Clientset(t),
		trace: filepath.Join(dir, "trace"), logs: filepath.Join(dir, "operator.log"),
	}
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

// setConfigKey sets one key of the operator's ConfigMap, keeping the others
// (also those hooks wrote).
func (h *harness) setConfigKey(key, value string) {
	h.t.Helper()
	cm, err := h.client.CoreV1().ConfigMaps(h.ns).Get(h.t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		h.t.Fatalf("get ConfigMap: %v", err)
	}
	cm.Data[key] = value
	if _, err := h.client.CoreV1().ConfigMaps(h.ns).Update(h.t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		h.t.Fatalf("update ConfigMap: %v", err)
	}
}

// start runs the operator with short retry delays; args are extra flags.
func (h *harness) start(args ...string) {
	h.t.Helper()
	logs, err := os.OpenFile(h.logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = logs.Close() }()
	// The operator outlives t.Context(): stop() ends it from a cleanup.
	cmd := exec.CommandContext(context.WithoutCancel(h.t.Context()), bin, append([]string{"start",
		"--retry-delay=200ms", "--retry-max-delay=1s", "--log-type=json", "--log-level=debug",
		"--tmp-dir=" + filepath.Join(h.dir, "tmp"),
		// Tests run operators side by side: no fixed port or socket.
		"--listen-address=127.0.0.1:0", "--debug-socket=" + filepath.Join(h.dir, "debug.socket"),
	}, args...)...)
	cmd.Env = append(os.Environ(),
		"ADDON_OPERATOR_MODULES_DIR="+filepath.Join(h.dir, "modules"),
		"ADDON_OPERATOR_GLOBAL_HOOKS_DIR="+filepath.Join(h.dir, "global-hooks"),
		"ADDON_OPERATOR_NAMESPACE="+h.ns,
		"KUBECONFIG="+cp.Kubeconfig,
		"TRACE_FILE="+h.trace,
		"TRACE_LIB="+filepath.Join(h.dir, "trace.sh"),
	)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start operator: %v", err)
	}
	h.proc = cmd
}

// stop sends SIGTERM and waits for the operator to exit.
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

// countLog counts log lines with the message whose attributes include want.
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

// poll calls cond until it holds or waitTimeout passes.
func (h *harness) poll(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// readTrace returns the trace lines written so far.
func (h *harness) readTrace() []string {
	data, err := os.ReadFile(h.trace)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// expectTrace waits until the trace has grown by len(want) lines since
// mark and checks they are exactly want. It returns the new mark.
func (h *harness) expectTrace(mark int, want ...string) int {
	h.t.Helper()
	h.poll(fmt.Sprintf("trace lines %v", want), func() bool { return len(h.readTrace()) >= mark+len(want) })
	got := h.readTrace()[mark:]
	if !slices.Equal(got, want) {
		h.t.Fatalf("trace after line %d:\n got  %v\n want %v", mark, got, want)
	}
	return mark + len(want)
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

// alphaData returns the data of the ConfigMap that module alpha's release
// renders, nil when it does not exist.
func (h *harness) alphaData() map[string]string {
	h.t.Helper()
	cm, err := h.client.CoreV1().ConfigMaps(h.ns).Get(h.t.Context(), "alpha", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatalf("get ConfigMap alpha: %v", err)
	}
	return cm.Data
}
