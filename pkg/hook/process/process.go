// Package process runs hooks' child processes: in a process group of their
// own, killed on timeout or cancellation and swept when they exit, their
// output logged line by line within a budget and the tail of stderr kept;
// "#!/usr/bin/env" scripts started without env, Python hooks by their
// module's venv.
package process

import (
	"bytes"
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

// Process is one child process to start.
type Process struct {
	Path string
	Args []string
	Env  []string
	// Timeout bounds the run; WaitDelay is the grace between SIGTERM and
	// SIGKILL to its process group on timeout or cancellation.
	Timeout   time.Duration
	WaitDelay time.Duration
	// Logger receives the output lines; Warnings the warning about a
	// Python hook without a venv. Nil discards them.
	Logger   *slog.Logger
	Warnings *slog.Logger
	// Stdout receives standard output; nil logs it line by line.
	Stdout io.Writer
	// LogLimit bounds the bytes of output lines logged for the run, both
	// streams together; zero means no bound.
	LogLimit int64
}

// Runner starts processes. The zero value is ready to use; it holds
// caches and a pool of buffers, is safe for concurrent use and must not
// be copied after first use.
type Runner struct {
	// copyBufs are the buffers processes' output is read with; the zero
	// pool is ready to use.
	copyBufs sync.Pool
	// interpreters remembers scripts' "#!/usr/bin/env" interpreters, an
	// interpreterEntry by interpreterKey (see interpreterOf).
	interpreters sync.Map
	// venvWarned holds the Python hooks already warned about for running
	// without a venv (see withVenv).
	venvWarned sync.Map
}

// ErrTimeout is matched (errors.Is) by the error of a run that exceeded its
// timeout; the error's text says how long the timeout was.
var ErrTimeout = errors.New("timed out")

// ExitError reports a hook or script that ran and failed: it exited with a
// non-zero code or was killed by a signal.
type ExitError struct {
	// Code is the exit code, or -1 when the process was killed by a signal.
	Code int
	// Signal is the signal that killed the process, or 0.
	Signal syscall.Signal
	// Stderr is the tail of the process's standard error: at most the last
	// 20 lines and 4 KiB, without a trailing newline.
	Stderr string
}

// Error reports the exit code or signal followed by the stderr tail.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("exit code %d", e.Code)
	if e.Signal != 0 {
		msg = fmt.Sprintf("killed by signal %v", e.Signal)
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Run runs pr in its own process group and waits for it. On timeout or
// cancellation the group gets SIGTERM, then SIGKILL after the grace period;
// the group is swept with SIGKILL after the process exits in any case, so no
// descendant outlives the run.
func (e *Runner) Run(ctx context.Context, pr Process) error {
	if pr.Logger == nil {
		pr.Logger = slog.New(slog.DiscardHandler)
	}
	if pr.Warnings == nil {
		pr.Warnings = slog.New(slog.DiscardHandler)
	}
	pr = e.withVenv(pr)
	timeout := pr.Timeout
	timedOut := fmt.Errorf("%w after %s", ErrTimeout, timeout)
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, timedOut)
	defer cancel()

	cmd := exec.CommandContext(runCtx, pr.Path, pr.Args...)
	if in, ok := e.interpreterOf(pr.Path, pr.Env); ok {
		// What "#!/usr/bin/env NAME" would start, without env.
		cmd = exec.CommandContext(runCtx, in.path, append([]string{pr.Path}, pr.Args...)...)
		cmd.Args[0] = in.name
	}
	// cmd.Dir stays empty: a hook runs in the operator's working directory,
	// as in the established implementation, so hooks written for it that
	// use paths relative to that directory keep working.
	cmd.Env = pr.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = pr.WaitDelay
	budget := newLogBudget(pr.LogLimit)
	stderr := &lineLogger{logger: pr.Logger, stream: "stderr", tail: &tail{}, budget: budget}
	stdout := &lineLogger{logger: pr.Logger, stream: "stdout", budget: budget}
	var stdoutTo io.Writer = stdout
	if pr.Stdout != nil {
		stdoutTo = pr.Stdout
	}
	outputs, err := e.startProcess(cmd, stdoutTo, stderr)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	err = cmd.Wait()
	// The leader is reaped; its pid stays reserved as the group id while
	// any member lives, so this reaches only the run's own descendants.
	_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
	for _, o := range outputs {
		o.finish(&e.copyBufs)
	}
	stdout.flush()
	stderr.flush()
	if n := budget.dropped.Load(); n > 0 {
		pr.Logger.Warn("hook output not logged beyond the limit", slog.Int64(logkey.Limit, pr.LogLimit), slog.Int64(logkey.Count, n))
	}

	switch {
	case ctx.Err() == nil && errors.Is(context.Cause(runCtx), timedOut):
		return timedOut
	case ctx.Err() != nil:
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	return exitError(err, stderr.tail.String())
}

// exitError classifies the error of a run that was neither cancelled nor
// timed out.
func exitError(err error, stderrTail string) error {
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
	default:
		return fmt.Errorf("wait: %w", err)
	}
}

// copyBufSize is the buffer a process's output is read with, from
// Runner.copyBufs.
const copyBufSize = 8 << 10

// output is one output stream of a process: the read end of its pipe,
// copied to w on a goroutine of its own while the process runs.
type output struct {
	r    *os.File
	w    io.Writer
	done chan struct{}
}

// startProcess starts cmd with its stdout and stderr on pipes copied to
// stdout and stderr, and returns the pipes' readers for finish.
//
// The operator makes the pipes rather than os/exec, whose Wait waits for
// the end of the output: a hook that leaves a background process on its
// output (a forgotten redirection of "cmd &", or a daemon detached with
// setsid) made every run wait for the whole wait delay, 5 s by default,
// and another run's child holds a copy of the pipes for the moment of its
// own exec. Wait here returns when the hook exits; the run's group is then
// killed, and finish reads what the pipes hold, which is all the run's
// processes wrote.
func (e *Runner) startProcess(cmd *exec.Cmd, stdout, stderr io.Writer) ([]*output, error) {
	var outputs []*output
	var writeEnds []*os.File
	closeAll := func() {
		for _, o := range outputs {
			_ = o.r.Close()
		}
		for _, w := range writeEnds {
			_ = w.Close()
		}
	}
	for _, w := range []io.Writer{stdout, stderr} {
		r, wr, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		outputs = append(outputs, &output{r: r, w: w, done: make(chan struct{})})
		writeEnds = append(writeEnds, wr)
	}
	cmd.Stdout, cmd.Stderr = writeEnds[0], writeEnds[1]
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	for _, w := range writeEnds {
		_ = w.Close()
	}
	for _, o := range outputs {
		go o.copy(&e.copyBufs)
	}
	return outputs, nil
}

// copy copies the pipe to the writer until the pipe ends or finish stops
// it.
func (o *output) copy(pool *sync.Pool) {
	defer close(o.done)
	bp := copyBuf(pool)
	defer pool.Put(bp)
	// Plain Reader and Writer, so that CopyBuffer uses the pooled buffer
	// rather than a WriteTo or ReadFrom of its own (32 KiB a call).
	_, _ = io.CopyBuffer(struct{ io.Writer }{o.w}, struct{ io.Reader }{o.r}, *bp)
}

// finish stops the copy without waiting for the pipe's end, copies what the
// pipe still holds, and closes it. Called once the run's process group is
// gone, when nothing the run started can write any more.
func (o *output) finish(pool *sync.Pool) {
	defer o.r.Close()
	if o.r.SetReadDeadline(time.Now()) != nil {
		<-o.done // not pollable: the end is the only way out
		return
	}
	<-o.done
	if o.r.SetReadDeadline(time.Time{}) != nil {
		return
	}
	rc, err := o.r.SyscallConn()
	if err != nil {
		return
	}
	bp := copyBuf(pool)
	defer pool.Put(bp)
	_ = rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), *bp)
			if n > 0 {
				_, _ = o.w.Write((*bp)[:n])
				continue
			}
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return true // the end, empty (EAGAIN) or an error: done either way
		}
	})
}

func copyBuf(pool *sync.Pool) *[]byte {
	if bp, _ := pool.Get().(*[]byte); bp != nil {
		return bp
	}
	b := make([]byte, copyBufSize)
	return &b
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
// stdout and stderr, which are copied on two goroutines.
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
// run's budget, and keeps a tail when tail is set. It is written by its
// stream's copy goroutine, then by finish once that goroutine ended, then
// flushed, so it needs no lock of its own.
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
