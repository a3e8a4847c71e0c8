package runner

import "time"

// OnAttemptEnd makes f hear a module's name each time the end of an
// attempt of it (not cancelled) is recorded: its failure streak counted
// or reset, its backoff started. It is called after the attempt's waiters
// heard its result, so whoever shows Failures and NextRetry learns when
// they changed. Call it before the pool runs; f must not block.
func (r *Pool) OnAttemptEnd(f func(name string)) { r.onAttemptEnd = f }

// NextRetry returns when the module's backoff ends and it runs again;
// zero when it does not back off.
func (r *Pool) NextRetry(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state(name).retryAt
}
