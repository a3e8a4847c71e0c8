package hook

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/addon-operator/addon-operator/pkg/queue"
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

// ErrConfigV0 is matched (errors.Is) by the error of a hook whose
// configuration is in the legacy v0 format: configVersion v0, or none,
// which the established implementation reads as v0. It is terminal
// (queue.IsTerminal): a hook prints the same configuration every time, so
// loading it again cannot succeed; only a converted hook can.
var ErrConfigV0 = queue.TerminalError(errors.New("configVersion v0 is not supported"))

// convertV0 says how to convert a v0 configuration to v1.
const convertV0 = "convert it to v1: configVersion: v1; onStartup and schedule stay as they are; " +
	"onKubernetesEvent becomes kubernetes, each item with apiVersion and kind, " +
	"event [add, update, delete] as executeHookOnEvent [Added, Modified, Deleted], selector as labelSelector, " +
	"objectName as nameSelector.matchNames, namespaceSelector.matchNames as namespace.nameSelector.matchNames, " +
	"and executeHookOnSynchronization: false to keep running on events only; " +
	"binding contexts are then v1 (type, watchEvent, object instead of resourceEvent, resourceName)"
