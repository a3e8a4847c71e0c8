package hook

import (
	"errors"

	"github.com/addon-operator/addon-operator/pkg/hook/process"
	"github.com/addon-operator/addon-operator/pkg/hook/runfiles"
	"github.com/addon-operator/addon-operator/pkg/queue"
)

// ErrTimeout is matched (errors.Is) by the error of a run that exceeded its
// timeout; the error's text says how long the timeout was.
var ErrTimeout = process.ErrTimeout

// ExitError reports a hook or script that ran and failed: it exited with a
// non-zero code or was killed by a signal.
type ExitError = process.ExitError

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

// Result is what a successful run wrote to its output files (see
// runfiles.Result).
type Result = runfiles.Result
