// Package quickstart runs the README's quick start as written: its shell
// blocks, in a copy of the repository, against the local control plane
// that `make run` starts, with kubectl built like the control plane.
package quickstart

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// startTimeout bounds the first block: building the operator and, on a
// cold cache, the control plane, on a loaded two-core machine.
const startTimeout = 20 * time.Minute

// commandsTimeout bounds the other blocks, whose waits carry their own
// timeouts.
const commandsTimeout = 10 * time.Minute

// The quick start is the sh blocks between these markers.
const (
	beginMarker = "<!-- quickstart:begin"
	endMarker   = "<!-- quickstart:end -->"
	// readyLine is what the README says to wait for before the second
	// shell.
	readyLine = "first converge done"
)

var shBlock = regexp.MustCompile("(?s)(?:^|\n)```sh\n(.*?\n)```")

// TestQuickStart: make run starts the local control plane and the operator,
// the second shell's commands enable echo-service, and the module and its
// Deployment end up as the README says; then the commands of the other
// documents run as written (runDocs).
func TestQuickStart(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := quickStartBlocks(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := cluster.BuildKubectl(t.Context(), cache, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "addon-operator")
	copyRepository(t, root, dir)
	env := shellEnv(t, filepath.Dir(kubectl))

	server := startFirstBlock(t, dir, env, blocks[0])
	t.Cleanup(func() { stopAndCleanUp(t, dir, env, server) })
	server.waitFor(t, readyLine)

	out := runBlocks(t, dir, env, blocks[1:])
	checkEndState(t, dir, out)
	if t.Failed() {
		return
	}
	// The other documents' commands run against the same control plane
	// and operator, with echo-service enabled.
	runDocs(t, dir, docsEnv(dir, env))
}

// quickStartBlocks returns the sh blocks between the markers: at least
// two, the first being the one that runs in the foreground.
func quickStartBlocks(readme string) ([]string, error) {
	begin := strings.Index(readme, beginMarker)
	end := strings.Index(readme, endMarker)
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("README.md has no %q ... %q section", beginMarker, endMarker)
	}
	var blocks []string
	for _, m := range shBlock.FindAllStringSubmatch(readme[begin:end], -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) < 2 {
		return nil, fmt.Errorf("the quick start has %d sh blocks, want the foreground one and the second shell's", len(blocks))
	}
	return blocks, nil
}

// copyRepository copies the files git knows of (tracked, and new ones it
// does not ignore) from root to dir: what a clone of this work tree holds.
func copyRepository(t *testing.T, root, dir string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the repository's files: %v", err)
	}
	for name := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if err := copyFile(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// copyFile copies one file with its mode; a file git lists but that is
// deleted in the work tree is left out, a symlink stays one.
func copyFile(from, to string) error {
	info, err := os.Lstat(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o750); err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, info.Mode().Perm())
}

// shellEnv is the environment of the README's shells: the test's own
// (Go's caches and the control plane's), without a KUBECONFIG (make run
// then starts the local control plane), kubectl on PATH, and the
// operator's HTTP listener on a free loopback port, so that it neither
// leaves the machine nor meets another operator's.
func shellEnv(t *testing.T, kubectlDir string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "KUBECONFIG", "KUBE_CONFIG", "PATH", "ADDON_OPERATOR_LISTEN_ADDRESS", "MAKEFLAGS", "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+kubectlDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ADDON_OPERATOR_LISTEN_ADDRESS="+freeLoopbackAddress(t))
}

func freeLoopbackAddress(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// background is the first block, running in its own process group, its
// output kept in a file.
type background struct {
	cmd  *exec.Cmd
	log  string
	done chan error
}

func startFirstBlock(t *testing.T, dir string, env []string, block string) *background {
	t.Helper()
	log := filepath.Join(t.TempDir(), "first-block.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	// Not bound to the test's context: stopAndCleanUp stops it with a
	// TERM, as Ctrl-C would, and waits.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), "bash", "-euo", "pipefail", "-c", block)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &background{cmd: cmd, log: log, done: make(chan error, 1)}
	go func() {
		b.done <- cmd.Wait()
		_ = f.Close()
	}()
	return b
}

// waitFor waits until the block's output has a line containing what,
// failing when the block ends first or startTimeout passes.
func (b *background) waitFor(t *testing.T, what string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(b.log)
		if err == nil && bytes.Contains(data, []byte(what)) {
			return
		}
		select {
		case err := <-b.done:
			b.done <- err
			t.Fatalf("the first block ended (%v) before logging %q:\n%s", err, what, tail(b.log))
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first block did not log %q within %s:\n%s", what, startTimeout, tail(b.log))
		}
	}
}

// runBlocks runs the other blocks in one bash, as typed into the second
// shell, and returns their output.
func runBlocks(t *testing.T, dir string, env, blocks []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), commandsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.Join(blocks, "\n"))
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("the second shell:\n%s", out)
	if err != nil {
		t.Fatalf("the second shell's commands: %v", err)
	}
	return string(out)
}

// checkEndState asserts what the README promises: the second module
// list shows echo-service Ready, and its Deployment, Service and
// ConfigMap exist, the Deployment available.
func checkEndState(t *testing.T, dir, out string) {
	t.Helper()
	var rows []string
	for sc := bufio.NewScanner(strings.NewReader(out)); sc.Scan(); {
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[0] == "echo-service" {
			rows = append(rows, sc.Text())
		}
	}
	if len(rows) < 2 || !strings.Contains(rows[len(rows)-1], "Ready") {
		t.Errorf("echo-service rows of the module lists = %q, want the last one Ready", rows)
	}
	for _, want := range []string{"deployment.apps/echo-service", "service/echo-service", "configmap/echo-service"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get deploy,svc,cm lacks %s", want)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, ".cluster", "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := client.AppsV1().Deployments("addon-operator").Get(t.Context(), "echo-service", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !available(d) {
		t.Errorf("echo-service's Deployment is not available: %+v", d.Status)
	}
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stopAndCleanUp ends the first block as Ctrl-C in its shell would, then
// stops the control plane as the README says (make cluster-down).
func stopAndCleanUp(t *testing.T, dir string, env []string, b *background) {
	t.Helper()
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-b.done:
		t.Logf("make run ended on SIGINT: %v", err) // make reports the signal
	case <-time.After(time.Minute):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		err := <-b.done
		t.Errorf("make run did not stop within a minute of SIGINT (killed: %v):\n%s", err, tail(b.log))
	}
	down := exec.CommandContext(context.WithoutCancel(t.Context()), "make", "cluster-down")
	down.Dir, down.Env = dir, env
	if out, err := down.CombinedOutput(); err != nil {
		t.Errorf("make cluster-down: %v\n%s", err, out)
	}
	if t.Failed() {
		t.Logf("the first block's output:\n%s", tail(b.log))
	}
}

// tail is the end of a log file, for failure messages.
func tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	const keep = 8000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return string(data)
}
