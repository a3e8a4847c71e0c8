package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// logLine is one JSON log line of the operator.
type logLine struct {
	at    time.Time // when the test read it
	msg   string
	attrs map[string]any
}

// attr returns the attribute key as a string, "" when absent.
func (l logLine) attr(key string) string {
	v, ok := l.attrs[key]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// logTail receives an operator's output: it copies it to the file with
// every run's log and keeps the parsed JSON lines for waiting on them.
type logTail struct {
	mu      sync.Mutex
	raw     io.Writer
	partial []byte
	lines   []logLine
	changed chan struct{} // closed and replaced whenever lines grows
}

func newLogTail(raw io.Writer) *logTail {
	return &logTail{raw: raw, changed: make(chan struct{})}
}

// Write implements io.Writer; exec.Cmd calls it from one goroutine.
func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.raw.Write(p)
	l.partial = append(l.partial, p...)
	now := time.Now()
	grew := false
	for {
		line, rest, found := bytes.Cut(l.partial, []byte("\n"))
		if !found {
			break
		}
		var attrs map[string]any
		if json.Unmarshal(line, &attrs) == nil {
			msg, _ := attrs["msg"].(string)
			l.lines = append(l.lines, logLine{at: now, msg: msg, attrs: attrs})
			grew = true
		}
		l.partial = rest
	}
	if grew {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	return len(p), nil
}

// snapshot returns the lines so far and a channel closed when more come.
func (l *logTail) snapshot() ([]logLine, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines, l.changed
}

// count returns how many lines have been read.
func (l *logTail) count() int {
	lines, _ := l.snapshot()
	return len(lines)
}

// errExited reports that the operator exited while the test waited for a
// log line.
var errExited = errors.New("operator exited")

// operator is one run of the addon-operator binary.
type operator struct {
	cmd    *exec.Cmd
	log    *logTail
	exited chan struct{} // closed once the process is reaped
}

// startOperator runs the binary for w's namespace with short retry delays
// and JSON debug logs appended to w's log file.
func (w *world) startOperator() *operator {
	w.t.Helper()
	tail := newLogTail(w.logFile)
	// The operator outlives t.Context(): kill ends it, from a cleanup at the
	// latest.
	cmd := exec.CommandContext(context.WithoutCancel(w.t.Context()), bin, "start",
		"--retry-delay=100ms", "--retry-max-delay=1s", "--log-type=json", "--log-level=debug",
		"--tmp-dir="+filepath.Join(w.fixture.dir, "tmp"),
	)
	cmd.Env = append(os.Environ(),
		"ADDON_OPERATOR_MODULES_DIR="+filepath.Join(w.fixture.dir, "modules"),
		"ADDON_OPERATOR_GLOBAL_HOOKS_DIR="+filepath.Join(w.fixture.dir, "global-hooks"),
		"ADDON_OPERATOR_NAMESPACE="+w.ns,
		"KUBECONFIG="+cp.Kubeconfig,
		"CHAOS_STATE_DIR="+w.stateDir,
		// Other tests run operators side by side: no fixed port or socket.
		"ADDON_OPERATOR_LISTEN_ADDRESS=127.0.0.1:0",
		"ADDON_OPERATOR_DEBUG_SOCKET="+filepath.Join(w.fixture.dir, "debug.socket"),
	)
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second // hooks never hold its output open, but a stray child must not hang Wait
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("start operator: %v", err)
	}
	op := &operator{cmd: cmd, log: tail, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(op.exited)
	}()
	w.t.Cleanup(op.kill)
	return op
}

// kill sends SIGKILL and waits until the process is reaped. Killing a dead
// operator is a no-op.
func (op *operator) kill() {
	_ = op.cmd.Process.Signal(syscall.SIGKILL)
	<-op.exited
}

// waitLog waits for the first line from index from on that match accepts
// and returns its index.
func (op *operator) waitLog(ctx context.Context, from int, what string, match func(logLine) bool) (int, error) {
	for {
		lines, changed := op.log.snapshot()
		for i := from; i < len(lines); i++ {
			if match(lines[i]) {
				return i, nil
			}
		}
		from = len(lines)
		select {
		case <-changed:
		case <-op.exited:
			if op.log.count() == len(lines) {
				return 0, fmt.Errorf("wait for %s: %w (exit: %v)", what, errExited, op.cmd.ProcessState)
			}
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for %s: %w", what, context.Cause(ctx))
		}
	}
}

// lines returns the lines read so far.
func (op *operator) lines() []logLine {
	lines, _ := op.log.snapshot()
	return lines
}

// message returns a matcher for log lines with message msg.
func message(msg string) func(logLine) bool {
	return func(l logLine) bool { return l.msg == msg }
}
