package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
	// Dir receives operator.log and the hooks' temporary files.
	Dir string
}

// Operator is a running operator process. Its log lines are in Logs.
type Operator struct {
	Logs *Logbook
	// Started is the time just before the process was started.
	Started time.Time

	cmd  *exec.Cmd
	stop context.CancelFunc
	done chan struct{} // closed once the process exited and Logs is closed
	log  *os.File
}

// StartOperator starts `addon-operator start` with JSON debug logs. The
// process ends with Stop or when ctx ends (SIGTERM, then SIGKILL after
// stopGrace), and with the harness if that dies.
func StartOperator(ctx context.Context, o OperatorOptions) (*Operator, error) {
	logFile, err := os.Create(filepath.Join(o.Dir, "operator.log"))
	if err != nil {
		return nil, fmt.Errorf("create operator log: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(runCtx, o.Binary, "start",
		"--namespace="+o.Namespace,
		"--modules-dir="+o.Layout.ModulesDir,
		"--global-hooks-dir="+o.Layout.GlobalHooksDir,
		"--tmp-dir="+filepath.Join(o.Dir, "tmp"),
		"--module-workers="+strconv.Itoa(o.Workers),
		"--log-type=json", "--log-level=debug",
	)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+o.Kubeconfig, EnvNamespace+"="+o.Namespace)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	op := &Operator{Logs: NewLogbook(logFile), cmd: cmd, stop: cancel, done: make(chan struct{}), log: logFile}
	cmd.Stdout, cmd.Stderr = logFile, op.Logs
	op.Started = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logFile.Close()
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

// Stop sends SIGTERM and waits for the process to exit.
func (op *Operator) Stop() {
	op.stop()
	<-op.done
	_ = op.log.Close()
}
