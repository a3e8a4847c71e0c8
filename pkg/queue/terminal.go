package queue

import "errors"

// TerminalError returns an error that will not be retried but is still
// reported as a failure with err's message: logged, and counted where
// failures are counted. It is for errors that retrying cannot fix (a hook
// configuration that can never load, a settings section only the user can
// correct, an object that cannot be decoded); only new inputs (a request,
// a changed object) run the work again. errors.Is and errors.As see err
// through the mark. It returns nil for a nil err.
//
// Every runner of the project honours it: the module pool (pkg/runner)
// starts no backoff, the operator's task handlers on the named queues do
// not retry the task, the ExecutionHook controller forgets the hook until
// it changes.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether an error in err's chain was marked by
// TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

type terminalError struct{ err error }

func (e *terminalError) Error() string { return e.err.Error() }

func (e *terminalError) Unwrap() error { return e.err }
