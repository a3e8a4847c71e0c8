package hook

import (
	"errors"
	"fmt"
	"syscall"
)

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
