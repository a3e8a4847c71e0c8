package queue

import "errors"

// TerminalError marks err as one that retrying cannot fix (a hook
// configuration that can never load, a settings section only the user can
// correct): a runner reports it as a failure, with err's message, but
// schedules no retry; only new inputs run the work again. errors.Is and
// errors.As see err through the mark.
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
