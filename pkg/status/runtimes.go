package status

import "time"

// RunTimes are a module's run times as its Module object's status carries
// them: when its last run ended and how long it took, its failed runs in
// a row, when a failed module runs again, and when a schedule binding of
// its hooks fires next. A zero time or count is absent.
type RunTimes struct {
	LastRun         time.Time     `json:"lastRun,omitzero"`
	LastRunDuration time.Duration `json:"lastRunDuration,omitempty"`
	Attempts        int           `json:"attempts,omitempty"`
	NextRetry       time.Time     `json:"nextRetry,omitzero"`
	NextRun         time.Time     `json:"nextRun,omitzero"`
}
