package hook

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

const (
	// maxLogLine splits longer output lines so one line cannot grow without
	// bound in memory.
	maxLogLine = 64 << 10
	// stderrTailLines and stderrTailBytes bound the stderr kept for ExitError.
	stderrTailLines = 20
	stderrTailBytes = 4 << 10
)

// process is one child process to start.
type process struct {
	path    string
	args    []string
	env     []string
	timeout time.Duration
	logger  *slog.Logger
	// stdout receives standard output; nil logs it line by line.
	stdout io.Writer
	// logLimit bounds the bytes of output lines logged for the run, both
	// streams together; zero means no bound.
	logLimit int64
}

// execute runs pr in its own process group and waits for it. On timeout or
// cancellation the group gets SIGTERM, then SIGKILL after the grace period;
// the group is swept with SIGKILL after the process exits in any case, so no
// descendant outlives the run.
func (e *Executor) execute(ctx context.Context, pr process) error {
	timeout := cmp.Or(pr.timeout, e.Timeout, DefaultTimeout)
	timedOut := fmt.Errorf("%w after %s", ErrTimeout, timeout)
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, timedOut)
	defer cancel()

	cmd := exec.CommandContext(runCtx, pr.path, pr.args...)
	if in, ok := e.interpreterOf(pr.path, pr.env); ok {
		// What "#!/usr/bin/env NAME" would start, without env.
		cmd = exec.CommandContext(runCtx, in.path, append([]string{pr.path}, pr.args...)...)
		cmd.Args[0] = in.name
	}
	// cmd.Dir stays empty: a hook runs in the operator's working directory,
	// as in the established implementation, so hooks written for it that
	// use paths relative to that directory keep working.
	cmd.Env = pr.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = cmp.Or(e.WaitDelay, DefaultWaitDelay)
	budget := newLogBudget(pr.logLimit)
	stderr := &lineLogger{logger: pr.logger, stream: "stderr", tail: &tail{}, budget: budget}
	cmd.Stderr = pooledWriter{stderr, &e.copyBufs}
	stdout := &lineLogger{logger: pr.logger, stream: "stdout", budget: budget}
	cmd.Stdout = pooledWriter{stdout, &e.copyBufs}
	if pr.stdout != nil {
		cmd.Stdout = pooledWriter{pr.stdout, &e.copyBufs}
	}

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	err := cmd.Wait()
	// The leader is reaped; its pid stays reserved as the group id while
	// any member lives, so this reaches only the run's own descendants.
	_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
	stdout.flush()
	stderr.flush()
	if n := budget.dropped.Load(); n > 0 {
		pr.logger.Warn("hook output not logged beyond the limit", slog.Int64(logkey.Limit, pr.logLimit), slog.Int64(logkey.Count, n))
	}

	switch {
	case ctx.Err() == nil && errors.Is(context.Cause(runCtx), timedOut):
		return timedOut
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	return exitError(cmd, err, stderr.tail.String())
}

// exitError classifies the error of a run that was neither cancelled nor
// timed out.
func exitError(cmd *exec.Cmd, err error, stderrTail string) error {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exitErr):
		e := &ExitError{Code: exitErr.ExitCode(), Stderr: stderrTail}
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal()
		}
		return e
	case errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState.Success():
		// A background descendant kept the output open after the hook
		// exited successfully; the sweep has killed it.
		return nil
	default:
		return fmt.Errorf("wait: %w", err)
	}
}

// copyBufSize is the buffer os/exec's copy goroutines read a hook's output
// with, from Executor.copyBufs.
const copyBufSize = 8 << 10

// pooledWriter is a process's stdout or stderr writer that hands os/exec's
// copy goroutine a buffer from pool. Without it io.Copy allocates 32 KiB
// per stream per run: 8 % of the operator's allocations while converging
// 1000 modules.
type pooledWriter struct {
	w    io.Writer
	pool *sync.Pool
}

func (p pooledWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// ReadFrom copies r to the writer through a pooled buffer; io.Copy uses it
// in place of its own.
func (p pooledWriter) ReadFrom(r io.Reader) (int64, error) {
	bp, _ := p.pool.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, copyBufSize)
		bp = &b
	}
	defer p.pool.Put(bp)
	// Plain Reader and Writer, so that CopyBuffer does not hand the copy
	// back to WriteTo or ReadFrom.
	return io.CopyBuffer(struct{ io.Writer }{p.w}, struct{ io.Reader }{r}, *bp)
}

// signalGroup signals the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// logBudget is the bytes of output a run may still log, shared by its
// stdout and stderr, which os/exec copies on two goroutines.
type logBudget struct {
	unlimited bool
	remaining atomic.Int64
	dropped   atomic.Int64
}

func newLogBudget(limit int64) *logBudget {
	b := &logBudget{unlimited: limit <= 0}
	b.remaining.Store(limit)
	return b
}

// take reports whether a line of n bytes may be logged, and counts it as
// dropped when not. Once a line is refused, later smaller lines are
// refused too, so the log never shows a run's output with holes in it.
func (b *logBudget) take(n int) bool {
	if b.unlimited {
		return true
	}
	if b.dropped.Load() == 0 && b.remaining.Add(-int64(n)) >= 0 {
		return true
	}
	b.remaining.Store(-1)
	b.dropped.Add(int64(n))
	return false
}

// lineLogger logs what a process writes, one record per line, within the
// run's budget, and keeps a tail when tail is set. It is written by one
// goroutine of os/exec and flushed after Wait, so it needs no lock of its
// own.
type lineLogger struct {
	logger *slog.Logger
	stream string
	buf    []byte
	tail   *tail
	budget *logBudget
}

// Write logs every complete line in p and buffers the rest.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	rest := l.buf
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		l.line(rest[:i])
		rest = rest[i+1:]
	}
	if len(rest) >= maxLogLine {
		l.line(rest)
		rest = nil
	}
	l.buf = append(l.buf[:0], rest...)
	return len(p), nil
}

// flush logs a last line that lacks a newline.
func (l *lineLogger) flush() {
	if len(l.buf) > 0 {
		l.line(l.buf)
		l.buf = l.buf[:0]
	}
}

func (l *lineLogger) line(b []byte) {
	s := strings.TrimRight(string(b), "\r")
	if strings.TrimSpace(s) == "" {
		return
	}
	if l.budget == nil || l.budget.take(len(s)) {
		l.logger.Info("hook output", slog.String(logkey.Stream, l.stream), slog.String(logkey.Line, s))
	}
	if l.tail != nil {
		l.tail.add(s)
	}
}

// tail keeps the last lines of a stream within stderrTailLines and
// stderrTailBytes.
type tail struct {
	lines []string
}

func (t *tail) add(line string) {
	line = lastBytes(line, stderrTailBytes)
	t.lines = append(t.lines, line)
	if len(t.lines) > stderrTailLines {
		t.lines = t.lines[1:]
	}
}

// String joins the kept lines, dropping the oldest bytes beyond the limit.
func (t *tail) String() string {
	return lastBytes(strings.Join(t.lines, "\n"), stderrTailBytes)
}

// lastBytes returns at most the last n bytes of s, not starting mid-rune.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for s != "" && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}
