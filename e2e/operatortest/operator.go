package operatortest

import (
	"cmp"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/server"
)

// Options say how to start one run of the operator. Start adds what every
// run gets: JSON debug logs, the control plane's kubeconfig, the harness's
// namespace, a --tmp-dir of the run's own, and, since tests run operators
// side by side, an HTTP port and a debug socket of its own. The modules
// directories and the namespace are given in the environment, as a
// Deployment gives them, so hooks see them too.
type Options struct {
	// Name names the run in failure messages; "operator" when empty.
	Name           string
	ModulesDir     string
	GlobalHooksDir string
	// Args are more flags, after Start's: a later flag wins.
	Args []string
	// Env is the operator's environment, KEY=value; nil: the test's.
	Env []string
	// Output receives a copy of everything the run writes. When it is
	// nil, the output is shown in the test log if the test fails instead.
	Output io.Writer
}

// Operator is one run of the addon-operator binary. Unless the test waits
// for the run to end (Stop, Kill, Wait), it is stopped at cleanup and
// must then exit cleanly.
type Operator struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	log     *Log
	socket  string
	url     string         // the HTTP listener's base URL, once URL has found it
	tls     bool           // the listener serves HTTPS (--listen-tls)
	debug   *server.Client // the debug API client, once Debug has made it
	shown   bool           // the output is shown on failure
	exited  chan struct{}  // closed once the process is reaped
	err     error          // the result of Wait, set before exited is closed
	awaited bool           // the test has waited for the exit
}

// Start runs the operator with opts.
func (h *Harness) Start(opts Options) *Operator {
	t := h.T
	t.Helper()
	op := &Operator{
		t: t, name: cmp.Or(opts.Name, "operator"), log: newLog(opts.Output), socket: SocketPath(t),
		shown: opts.Output == nil, exited: make(chan struct{}), tls: slices.Contains(opts.Args, "--listen-tls"),
	}
	args := []string{"start", "--log-type=json", "--log-level=debug", "--tmp-dir=" + t.TempDir(),
		// A flag, so that no KUBE_CONFIG of the developer's shell wins.
		"--kubeconfig=" + h.kubeconfig,
		"--listen-address=127.0.0.1:0", "--debug-socket=" + op.socket,
	}
	// The operator outlives t.Context(): Stop ends it, from a cleanup at
	// the latest.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), h.bin, slices.Concat(args, opts.Args)...)
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	cmd.Env = slices.Concat(opts.Env, []string{
		"ADDON_OPERATOR_NAMESPACE=" + h.Namespace,
		"ADDON_OPERATOR_MODULES_DIR=" + opts.ModulesDir,
		"ADDON_OPERATOR_GLOBAL_HOOKS_DIR=" + opts.GlobalHooksDir,
	})
	out := logWriter{op.log}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second // hooks do not hold its output open, but a stray child must not hang Wait
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", op.name, err)
	}
	op.cmd = cmd
	go func() {
		op.err = cmd.Wait()
		op.log.close(op.err)
		close(op.exited)
	}()
	t.Cleanup(op.Stop)
	h.runs = append(h.runs, op)
	return op
}

// Log returns the run's output.
func (op *Operator) Log() *Log { return op.log }

// DebugSocket returns the path of the run's debug socket.
func (op *Operator) DebugSocket() string { return op.socket }

// Exited returns a channel closed once the run has exited.
func (op *Operator) Exited() <-chan struct{} { return op.exited }

// Signal sends sig to the operator, if it still runs.
func (op *Operator) Signal(sig os.Signal) { _ = op.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits for the operator to exit. The test fails
// unless it exits with status 0 within Timeout, also when it had already
// exited by itself. Stopping a run the test has waited for does nothing.
func (op *Operator) Stop() {
	op.t.Helper()
	if op.awaited {
		return
	}
	op.awaited = true
	op.Signal(syscall.SIGTERM)
	select {
	case <-op.exited:
		if op.err != nil {
			op.t.Errorf("%s exited with %v after SIGTERM", op.name, op.err)
		}
	case <-time.After(Timeout):
		op.Signal(syscall.SIGKILL)
		<-op.exited
		op.t.Errorf("%s did not stop within %s of SIGTERM", op.name, Timeout)
	}
}

// Kill sends SIGKILL and waits until the process is reaped. Killing an
// operator that has exited does nothing.
func (op *Operator) Kill() {
	op.awaited = true
	op.Signal(syscall.SIGKILL)
	<-op.exited
}

// Wait waits for the operator to exit and returns its exit error, nil
// after status 0. The test fails if it still runs after Timeout.
func (op *Operator) Wait() error {
	op.t.Helper()
	select {
	case <-op.exited:
	case <-time.After(Timeout):
		op.t.Fatalf("%s still runs after %s", op.name, Timeout)
	}
	op.awaited = true
	return op.err
}
