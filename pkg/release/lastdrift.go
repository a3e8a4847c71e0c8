package release

import (
	"slices"
	"time"

	"github.com/addon-operator/addon-operator/pkg/kube/drift"
)

// LastDrift is the outcome of a module's last drift check: when it ended,
// the objects that differed from the release, whether they were reverted,
// and the error that stopped the check or the revert.
type LastDrift struct {
	Checked  time.Time
	Drifts   []drift.Drift
	Reverted bool
	Err      error
}

// keepDrift records a drift check's outcome as the module's last.
func (r *Manager) keepDrift(d *deployed, drifts []drift.Drift, reverted bool, err error) {
	now := r.opts.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	d.last = &LastDrift{Checked: now, Drifts: slices.Clone(drifts), Reverted: reverted, Err: err}
}

// LastDriftCheck returns the outcome of the module's last drift check,
// false when none ran since the operator started.
func (r *Manager) LastDriftCheck(name string) (LastDrift, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.deployed[name]
	if d == nil || d.last == nil {
		return LastDrift{}, false
	}
	return *d.last, true
}
