package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long the operator may take to exit after SIGTERM
// before it is killed; the operator itself allows 30 s.
const stopGrace = 40 * time.Second

// BuildOperator builds the operator binary into dir the way `make build`
// does and returns its path. Build output goes to stderr.
func BuildOperator(ctx context.Context, dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locate bench package source")
	}
	bin := filepath.Join(dir, "addon-operator")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/addon-operator")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build addon-operator: %w", err)
	}
	return bin, nil
}

// OperatorOptions say how to run the operator.
type OperatorOptions struct {
	Binary     string
	Kubeconfig string
	Namespace  string
	Layout     Layout
	Workers    int
	// Dir receives operator.log, the hooks' temporary files and, when its
	// path is short enough, the debug socket.
	Dir string
	// Args are appended to the operator's command line, e.g.
	// --kube-client-qps=20; see CheckOperatorArgs.
	Args []string
	// CPUProfile, when set, is the file name prefix of CPU profiles of
	// the operator's first converge, taken through its debug socket
	// (startConverged).
	CPUProfile string
}

// maxSocketPath is the longest unix socket path used: Linux takes 107
// bytes, less a margin.
const maxSocketPath = 100

// harnessArgs are the arguments of `addon-operator start` the harness
// depends on: JSON debug logs to read, a listener for /metrics on a free
// port, and the run's own namespace, modules and debug socket. Hooks' files
// go where the operator puts them by default (--tmp-dir unset: memory when
// the machine has a tmpfs), as in the chart, which mounts a memory
// emptyDir at /tmp.
func harnessArgs(o OperatorOptions, socket string) []string {
	return []string{
		"start",
		"--namespace=" + o.Namespace,
		"--modules-dir=" + o.Layout.ModulesDir,
		"--global-hooks-dir=" + o.Layout.GlobalHooksDir,
		"--module-workers=" + strconv.Itoa(o.Workers),
		"--log-type=json", "--log-level=debug",
		"--listen-address=127.0.0.1:0",
		"--debug-socket=" + socket,
	}
}

// CheckOperatorArgs rejects extra operator arguments that set a flag the
// harness sets itself: the measurements depend on those.
func CheckOperatorArgs(args []string) error {
	var own []string
	for _, a := range harnessArgs(OperatorOptions{}, "") {
		if name, ok := flagName(a); ok {
			own = append(own, name)
		}
	}
	for _, a := range args {
		if name, ok := flagName(a); ok && slices.Contains(own, name) {
			return fmt.Errorf("operator argument %q: --%s is set by the bench", a, name)
		}
	}
	return nil
}

// flagName returns the name of a "--name=value" or "-name" argument.
func flagName(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name, name != ""
}

// debugSocket returns where the operator's debug socket goes: in dir
// when the path is short enough, else in a new temporary directory that
// cleanup removes.
func debugSocket(dir string) (path string, cleanup func(), err error) {
	path = filepath.Join(dir, "debug.socket")
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "aob-")
	if err != nil {
		return "", nil, fmt.Errorf("create debug socket dir: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	path = filepath.Join(tmp, "debug.socket")
	if len(path) > maxSocketPath {
		cleanup()
		return "", nil, fmt.Errorf("debug socket path %s: longer than %d bytes; set TMPDIR to a shorter directory", path, maxSocketPath)
	}
	return path, cleanup, nil
}

// Operator is a running operator process. Its log lines are in Logs.
type Operator struct {
	Logs *Logbook
	// Started is the time just before the process was started.
	Started time.Time
	// Socket is the operator's debug socket.
	Socket string

	cmd     *exec.Cmd
	stop    context.CancelFunc
	done    chan struct{} // closed once the process exited and Logs is closed
	log     *os.File
	cleanup func() // removes the debug socket's directory
}

// StartOperator starts `addon-operator start` with harnessArgs and o.Args.
// The process ends with Stop or when ctx ends (SIGTERM, then SIGKILL after
// stopGrace), and with the harness if that dies.
func StartOperator(ctx context.Context, o OperatorOptions) (*Operator, error) {
	socket, cleanup, err := debugSocket(o.Dir)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(o.Dir, "operator.log"))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("create operator log: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(runCtx, o.Binary, append(harnessArgs(o, socket), o.Args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+o.Kubeconfig, EnvNamespace+"="+o.Namespace)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	op := &Operator{Logs: NewLogbook(logFile), Socket: socket, cmd: cmd, stop: cancel, done: make(chan struct{}), log: logFile, cleanup: cleanup}
	cmd.Stdout, cmd.Stderr = logFile, op.Logs
	op.Started = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logFile.Close()
		cleanup()
		return nil, fmt.Errorf("start operator: %w", err)
	}
	go func() {
		op.Logs.Close(cmd.Wait())
		close(op.done)
	}()
	return op, nil
}

// Pid returns the operator's process id.
func (op *Operator) Pid() int { return op.cmd.Process.Pid }

// LogPath returns the file with everything the operator printed.
func (op *Operator) LogPath() string { return op.log.Name() }

// Address waits for the operator's HTTP listener and returns its
// host:port, from the log line "http server listening".
func (op *Operator) Address(ctx context.Context) (string, error) {
	e, err := op.Logs.Wait(ctx, 0, Message(msgListening))
	if err != nil {
		return "", fmt.Errorf("wait for the http listener: %w", err)
	}
	addr := e.Str("name")
	if addr == "" {
		return "", fmt.Errorf("log line %q without the address in name", msgListening)
	}
	return addr, nil
}

// Stop sends SIGTERM and waits for the process to exit.
func (op *Operator) Stop() {
	op.stop()
	<-op.done
	_ = op.log.Close()
	op.cleanup()
}
