package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Order returns the modules' names so that each comes after every module
// it waits for (module.Module.Waits); among modules free to go, the lower
// order, then the name, comes first. Discover rejects cycles, so every
// module is in the result. Disabling goes through it backwards:
// dependents first.
func Order(mods *module.Set) []string {
	list := mods.Modules() // by order, then name: the tie-break
	deps := dependencies(list)
	left := make(map[string]int, len(list)) // modules each still waits for
	dependents := map[string][]string{}
	for _, m := range list {
		left[m.Name()] = len(deps[m.Name()])
		for _, d := range deps[m.Name()] {
			dependents[d.name] = append(dependents[d.name], m.Name())
		}
	}
	placed := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for len(out) < len(list) {
		i := slices.IndexFunc(list, func(m *module.Module) bool { return !placed[m.Name()] && left[m.Name()] == 0 })
		if i < 0 {
			break // a cycle; Discover rejects them
		}
		name := list[i].Name()
		placed[name] = true
		out = append(out, name)
		for _, d := range dependents[name] {
			left[d]--
		}
	}
	return out
}

// dep is one module another waits for, and how.
type dep struct {
	name string
	wait module.Wait
}

// dependencies lists, for each module, the modules of list it waits for.
func dependencies(list []*module.Module) map[string][]dep {
	out := make(map[string][]dep, len(list))
	for _, m := range list {
		for _, o := range list {
			if w := m.Waits(o); w != module.WaitNone {
				out[m.Name()] = append(out[m.Name()], dep{name: o.Name(), wait: w})
			}
		}
	}
	return out
}

// DisableUnmet disables every enabled module that requires a disabled
// one, transitively: a module never runs without what it requires. The
// decision names the requirement.
func DisableUnmet(mods *module.Set, decisions []Decision) []Decision {
	out := slices.Clone(decisions)
	enabled := map[string]bool{}
	for _, d := range out {
		enabled[d.Name] = d.Enabled
	}
	for changed := true; changed; {
		changed = false
		for i, d := range out {
			if !d.Enabled {
				continue
			}
			m, _ := mods.Module(d.Name)
			var off []string
			for _, req := range m.Requires() {
				if !enabled[req] {
					off = append(off, req)
				}
			}
			if len(off) > 0 {
				out[i].Enabled, out[i].By = false, status.SourceRequirement
				out[i].Reason = fmt.Sprintf("requires %s, which is disabled", strings.Join(off, ", "))
				enabled[d.Name], changed = false, true
			}
		}
	}
	return out
}

// progress is where one module of a Schedule is.
type progress int

const (
	notStarted progress = iota
	started             // its first attempt runs
	attempted           // an attempt ended and it is not ready
	ready               // an attempt ended with the module ready
)

// Schedule walks one converge's modules through their dependency graph:
// a module starts once every module it requires (module.yaml) is ready
// and every module of a lower order that it waits for (no module.yaml)
// finished its first attempt. Independent modules start together; the
// module pool runs them in parallel. A Schedule is not safe for
// concurrent use: its owner serialises calls.
type Schedule struct {
	names []string // in start order
	deps  map[string][]dep
	state map[string]progress
}

// NewSchedule returns the schedule of the modules in run.
func NewSchedule(mods *module.Set, run []string) *Schedule {
	s := &Schedule{state: map[string]progress{}}
	inRun := map[string]bool{}
	for _, n := range run {
		inRun[n] = true
	}
	order := Order(mods)
	list := make([]*module.Module, 0, len(order))
	for _, n := range order {
		m, _ := mods.Module(n)
		list = append(list, m)
		if inRun[n] {
			s.names = append(s.names, n)
			s.state[n] = notStarted
		}
	}
	// Over every module: a requirement outside the run holds its
	// dependent (it is disabled, so the dependent should be too).
	s.deps = dependencies(list)
	return s
}

// Next returns the modules that may start now, in start order, and marks
// them started.
func (s *Schedule) Next() []string {
	var out []string
	for _, n := range s.names {
		if s.state[n] == notStarted && len(s.waitingFor(n)) == 0 {
			out = append(out, n)
		}
	}
	for _, n := range out {
		s.state[n] = started
	}
	return out
}

// Finished records the end of one of a module's attempts and whether the
// module is ready after it. A module not in the schedule is ignored.
func (s *Schedule) Finished(name string, isReady bool) {
	if _, ok := s.state[name]; !ok {
		return
	}
	if isReady {
		s.state[name] = ready
	} else {
		s.state[name] = attempted
	}
}

// Done reports whether the converge's pass is over: no first attempt is
// running and no module may start. Modules left waiting for a requirement
// that is not ready start later, when it becomes ready.
func (s *Schedule) Done() bool {
	for _, n := range s.names {
		if s.state[n] == started || (s.state[n] == notStarted && len(s.waitingFor(n)) == 0) {
			return false
		}
	}
	return true
}

// Ready reports whether a module of the schedule was ready after its last
// attempt.
func (s *Schedule) Ready(name string) bool { return s.state[name] == ready }

// WaitingFor returns the requirements of a module that have not
// released it yet, in start order.
func (s *Schedule) WaitingFor(name string) []string { return s.waitingFor(name) }

func (s *Schedule) waitingFor(name string) []string {
	var out []string
	for _, d := range s.deps[name] {
		st, inRun := s.state[d.name]
		switch d.wait {
		case module.WaitReady:
			if st != ready {
				out = append(out, d.name)
			}
		case module.WaitAttempt:
			if inRun && (st == notStarted || st == started) {
				out = append(out, d.name)
			}
		case module.WaitNone:
		}
	}
	return out
}
