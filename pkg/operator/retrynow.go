package operator

import (
	"log/slog"
	"time"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// RetryFailedNow runs every module that is backing off after a failure at
// once, and ends the backoff of a failed task at the head of any queue:
// the caller knows that what they failed on is gone, as when the API
// server answers again after an outage. Modules keep their failure streak
// (Events and the recovery line report it); their backoff starts again
// from the first delay. Safe for concurrent use.
func (o *Operator) RetryFailedNow() {
	mods := o.pool.RetryFailedNow()
	o.queues.RetryNow()
	if len(mods) > 0 {
		o.log.Info("retrying failed modules now", slog.Any(logkey.Module, mods))
	}
}

// logRecovery logs, once, that a module succeeded after failing runs.
func (o *Operator) logRecovery(name string, failures int, since time.Time) {
	o.log.Info("module recovered", slog.String(logkey.Module, name), slog.Int(logkey.Count, failures),
		slog.Duration(logkey.Duration, o.clock.Since(since)))
}
