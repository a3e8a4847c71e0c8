package attack

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// hardeningRestoreWithin bounds how long a hand-edited or deleted Module
// object may stay wrong: the operator writes it back within a fraction of
// a second; the rest is a loaded machine's margin. Before, it stayed
// wrong until the module's next change (here: never).
const hardeningRestoreWithin = 15 * time.Second

// hardeningModule is the module of the Module object tests; Module objects
// are cluster-scoped, so its name is this file's own.
const hardeningModule = "hardening-restore"

// TestAttackerEditsAndDeletesModuleObject: someone with write rights on
// Module objects (not the operator) edits one's status to show a healthy
// module as failed, then deletes the object. Each time the operator writes
// back what it knows, without waiting for the module's next change.
func TestAttackerEditsAndDeletesModuleObject(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	res := dyn.Resource(v1.ModulesResource())
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	hardeningWrite(t, filepath.Join(modules, "010-"+hardeningModule, "values.yaml"), "hardeningRestore: {}\n")
	hardeningWrite(t, filepath.Join(modules, "values.yaml"), "hardeningRestoreEnabled: true\n")
	op := h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--retry-delay=200ms", "--retry-max-delay=1s"}})
	op.WaitReady()
	t.Cleanup(func() { _ = res.Delete(context.WithoutCancel(t.Context()), hardeningModule, metav1.DeleteOptions{}) })

	get := func() (v1.Module, bool) {
		u, err := res.Get(t.Context(), hardeningModule, metav1.GetOptions{})
		if err != nil {
			return v1.Module{}, false
		}
		var m v1.Module
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
			t.Fatal(err)
		}
		return m, true
	}
	var orig v1.Module
	h.Poll("the Module object Ready", func() bool {
		m, ok := get()
		orig = m
		return ok && m.Status.Phase == v1.PhaseReady
	})

	// The attacker's edit, as kubectl edit --subresource=status would send it.
	patch := []byte(`{"status":{"phase":"Failed","lastError":"edited by hand: reinstall from https://attacker.example"}}`)
	edited := time.Now()
	if _, err := res.Patch(t.Context(), hardeningModule, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("edit the status: %v", err)
	}
	hardeningPollWithin(t, hardeningRestoreWithin, "the edited status written back", func() bool {
		m, ok := get()
		return ok && m.Status.Phase == v1.PhaseReady && m.Status.LastError == ""
	})
	t.Logf("edited status written back after %s", time.Since(edited).Round(time.Millisecond))

	deleted := time.Now()
	if err := res.Delete(t.Context(), hardeningModule, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the Module object: %v", err)
	}
	hardeningPollWithin(t, hardeningRestoreWithin, "the deleted Module object created again with its status", func() bool {
		m, ok := get()
		return ok && m.UID != orig.UID && m.Status.Phase == v1.PhaseReady
	})
	t.Logf("deleted object created again after %s", time.Since(deleted).Round(time.Millisecond))

	// No write loop: once restored, the object stays as it is; a watch
	// from the restored version sees no change for a few seconds.
	m, _ := get()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	w, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + hardeningModule, ResourceVersion: m.ResourceVersion})
	if err != nil {
		t.Fatalf("watch the Module object: %v", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetResourceVersion() != m.ResourceVersion {
			t.Fatalf("the Module object changed after the restore (%s, resourceVersion %s then %s)", ev.Type, m.ResourceVersion, u.GetResourceVersion())
		}
	}
}

// hardeningOutageWithin is how soon /readyz must show an outage of an idle
// operator's API server (before: 38-50 s, when some request failed).
const hardeningOutageWithin = 10 * time.Second

// TestAttackerTakesDownIdleControlPlaneUnnoticed stops etcd, then the API
// server, under an idle operator: nothing it sends fails, its watches stay
// open through the etcd outage, yet /readyz turns unready within 10 s and
// ready again once the server is back. It has a control plane of its own:
// the package's serves the other tests meanwhile.
func TestAttackerTakesDownIdleControlPlaneUnnoticed(t *testing.T) {
	own := hardeningControlPlane(t)
	h := operatortest.New(t, own, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	hardeningWrite(t, filepath.Join(modules, "010-idle", "values.yaml"), "idle: {}\n")
	hardeningWrite(t, filepath.Join(modules, "values.yaml"), "idleEnabled: true\n")
	op := h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--module-objects=false"}})
	op.WaitReady()
	readyz := func() int {
		code, _, _ := operatortest.HTTPGet(t, op.URL()+"/readyz")
		return code
	}
	for _, fault := range []struct {
		name  string
		stop  func() error
		start func(context.Context) error
	}{
		{name: "etcd", stop: own.StopEtcd, start: own.StartEtcd},
		{name: "kube-apiserver", stop: own.StopAPIServer, start: own.StartAPIServer},
	} {
		// Idle: the converge is over and nothing runs.
		h.Poll("/readyz 200 before stopping "+fault.name, func() bool { return readyz() == 200 })
		stopping := time.Now()
		if err := fault.stop(); err != nil {
			t.Fatalf("stop %s: %v", fault.name, err)
		}
		// The bound counts from the process's exit: kube-apiserver serves on
		// through its graceful shutdown (up to 10 s here, then killed).
		stopped := time.Now()
		t.Logf("%s stopped (its shutdown took %s)", fault.name, stopped.Sub(stopping).Round(time.Millisecond))
		t.Cleanup(func() { _ = fault.start(context.WithoutCancel(t.Context())) }) // an error says it runs already
		hardeningPollWithin(t, hardeningOutageWithin, "/readyz 503 with "+fault.name+" stopped", func() bool { return readyz() == 503 })
		t.Logf("%s stopped: /readyz unready after %s", fault.name, time.Since(stopped).Round(time.Millisecond))
		if err := fault.start(t.Context()); err != nil {
			t.Fatalf("start %s again: %v", fault.name, err)
		}
		back := time.Now()
		hardeningPollWithin(t, hardeningOutageWithin, "/readyz 200 with "+fault.name+" back", func() bool { return readyz() == 200 })
		t.Logf("%s back: /readyz ready after %s", fault.name, time.Since(back).Round(time.Millisecond))
	}
}

// hardeningOversize is the size of the oversized files: what the review
// shipped (50 MB), which took 437-466 MB of memory to load.
const hardeningOversize = 50 << 20

// hardeningMaxRSS bounds the operator's peak memory when it refuses such a
// file: its usual start-up footprint, far below the file's size.
const hardeningMaxRSS = 150 << 20

// TestAttackerShipsOversizedModuleFiles: a module whose module.yaml or
// values.yaml is 50 MB. The operator refuses that module, naming the
// file, its size and the limit, without reading it into memory; the
// module fails alone, the operator goes on.
func TestAttackerShipsOversizedModuleFiles(t *testing.T) {
	for _, file := range []string{"module.yaml", "values.yaml"} {
		t.Run(file, func(t *testing.T) {
			modules := filepath.Join(t.TempDir(), "modules")
			big := filepath.Join(modules, "010-bloated", file)
			hardeningWrite(t, filepath.Join(modules, "010-bloated", "Chart.yaml"), "apiVersion: v2\nname: bloated\nversion: 1.0.0\n")
			hardeningWriteBig(t, big, hardeningOversize)

			want := big + ": " + strconv.Itoa(hardeningOversize) + " bytes, over the limit of " + strconv.Itoa(4<<20)
			out, rss := hardeningRunUntil(t, modules, want)
			if !strings.Contains(out, `"msg":"module cannot run"`) || !strings.Contains(out, `"module":"bloated"`) {
				t.Errorf("the operator's output does not name the module that cannot run:\n%s", out)
			}
			t.Logf("peak RSS %d MiB refusing a %d MiB %s", rss>>20, hardeningOversize>>20, file)
			if rss > hardeningMaxRSS {
				t.Errorf("peak RSS %d MiB refusing the file, want at most %d MiB", rss>>20, hardeningMaxRSS>>20)
			}
		})
	}
}

// hardeningRunUntil runs the operator over modules until its output says
// want, stops it, and returns its output and its peak RSS in bytes: the
// kernel's ru_maxrss, the child's VmHWM at exit, which also counts the
// test process's RSS at the fork (Linux keeps the larger of the two across
// exec), so it is an upper bound.
func hardeningRunUntil(t *testing.T, modules, want string) (out string, rss int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), operatortest.Timeout)
	defer cancel()
	ns := cp.Namespace(t)
	cmd := exec.CommandContext(ctx, bin, "start", "--log-type=json", "--kube-config="+cp.Kubeconfig,
		"--namespace="+ns, "--modules-dir="+modules, "--global-hooks-dir=", "--tmp-dir="+t.TempDir(),
		"--listen-address=127.0.0.1:0", "--debug-socket="+operatortest.SocketPath(t))
	cmd.Env = append(os.Environ(), "ADDON_OPERATOR_NAMESPACE="+ns)
	buf := &hardeningOutput{}
	cmd.Stdout, cmd.Stderr = buf, buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hardeningPollWithin(t, operatortest.Timeout, "the operator to say "+want, func() bool { return strings.Contains(buf.String(), want) })
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait() // stopped on purpose; its exit status says nothing here
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // kilobytes on Linux
	}
	return buf.String(), rss
}

// hardeningOutput collects a process's output while the test reads it.
type hardeningOutput struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *hardeningOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *hardeningOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// hardeningControlPlane starts a control plane of the test's own, stopped
// at cleanup.
func hardeningControlPlane(t *testing.T) *cluster.ControlPlane {
	t.Helper()
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := cluster.Build(t.Context(), cache, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	own, err := cluster.Start(t.Context(), cluster.Options{Binaries: bins, Dir: t.TempDir(), Log: io.Discard})
	if err != nil {
		t.Fatalf("start a control plane: %v", err)
	}
	t.Cleanup(func() { _ = own.Stop() })
	return own
}

// hardeningPollWithin calls cond every 50 ms until it holds, failing the
// test after within.
func hardeningPollWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		<-tick.C
	}
}

func hardeningWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hardeningWriteBig writes a valid YAML map of size bytes, one long
// string, in chunks: the test's own memory is counted in the operator's
// ru_maxrss (hardeningRunUntil), so it must stay small.
func hardeningWriteBig(t *testing.T, path string, size int) {
	t.Helper()
	head := "bloated:\n  blob: "
	hardeningWrite(t, path, head)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	chunk := []byte(strings.Repeat("x", 1<<16))
	for left := size - len(head) - 1; left > 0; left -= len(chunk) {
		if _, err := f.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString("\n"); err != nil {
		t.Fatal(err)
	}
}
