package operator

import (
	"slices"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// moduleState is what the operator remembers about one module between runs.
type moduleState struct {
	Enabled bool
	By      status.Source
	// Reason says in words what decided Enabled (plan.Decision.Reason).
	Reason string
	// Hooks are loaded on the module's first run; nil until then.
	Hooks []*binding.Hook
	// HooksErr is a permanent error from loading the hooks (a hook's
	// configuration is v0): the module does not run, and its hooks are not
	// loaded again.
	HooksErr error
	// StartupDone is set once onStartup hooks ran after the module was
	// enabled.
	StartupDone bool
	// Reruns counts consecutive runs restarted because afterHelm hooks
	// changed values.
	Reruns int
	// Revision is the release revision after the last Helm run.
	Revision int
	// LastError is the last failure of a run or delete, "" after success.
	LastError string
	// Phase is where the module is: see the Phase constants.
	Phase status.Phase
	// Held is set while the module waits for modules it requires to be
	// ready.
	Held bool
	// Message says what a run waits for: required modules, or release
	// objects that are not ready.
	Message string
	// ValuesChecksum is the checksum of the values of the last Helm run.
	ValuesChecksum string
	// LastRun is when the last run ended, LastRunDuration how long it took.
	LastRun         time.Time
	LastRunDuration time.Duration
}

// states holds every module's state. The main queue worker (enabled
// state, a delete's start) and each module's runs and deletes on the
// module pool (phase, hooks, revision, errors) write it, one update at a time under the mutex, which
// also lets status readers in.
type states struct {
	mu     sync.RWMutex
	order  []string // module names in module order
	byName map[string]*moduleState
	// onChange is called with a module's name after each update of its
	// state, outside the lock.
	onChange func(name string)
	// runs records the steps of the modules' runs; it has its own lock.
	runs runLog
}

// newStates returns the states of the modules names, disabled, calling
// onChange (which may be nil) after each update, with runs (nil records
// nothing) for their runs' steps.
func newStates(names []string, onChange func(name string), runs runLog) *states {
	s := &states{order: names, byName: make(map[string]*moduleState, len(names)), onChange: onChange, runs: orNoRuns(runs)}
	for _, n := range names {
		s.byName[n] = &moduleState{}
	}
	return s
}

// update runs f on a module's state under the lock.
func (s *states) update(name string, f func(*moduleState)) {
	s.mu.Lock()
	f(s.byName[name])
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange(name)
	}
}

// get returns a copy of a module's state; for a name that is no module
// (the heal watch reports the records of a purged release under its
// name) the zero state, disabled.
func (s *states) get(name string) moduleState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if st, ok := s.byName[name]; ok {
		return *st
	}
	return moduleState{}
}

// enabledList returns enabled modules in module order.
func (s *states) enabledList() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []string{}
	for _, n := range s.order {
		if s.byName[n].Enabled {
			out = append(out, n)
		}
	}
	return out
}

// enabledSet returns the enabled modules as a set.
func (s *states) enabledSet() map[string]bool {
	set := map[string]bool{}
	for _, n := range s.enabledList() {
		set[n] = true
	}
	return set
}

// snapshot returns every module's status in module order.
func (s *states) snapshot() []status.ModuleStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]status.ModuleStatus, 0, len(s.order))
	for _, n := range slices.Clone(s.order) {
		st := s.byName[n]
		phase := st.Phase
		if phase == "" {
			phase = status.PhaseDisabled
		}
		msg := st.Message
		if !st.Enabled && (st.By == status.SourceRequirement || st.By == status.SourceExclusiveGroup) {
			msg = st.Reason
		}
		out = append(out, status.ModuleStatus{Name: n, Enabled: st.Enabled, By: st.By, Reason: st.Reason, Phase: phase, Revision: st.Revision, LastError: st.LastError, Message: msg})
	}
	return out
}
