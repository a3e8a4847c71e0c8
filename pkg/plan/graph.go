package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Order returns the modules' names so that each comes after every module
// it waits for (module.Module.Waits); among modules free to go, the lower
// order, then the name, comes first. Discover rejects cycles, so every
// module is in the result. Disabling goes through it backwards:
// dependents first.
//
// A module without module.yaml waits for every module of a lower order:
// with N modules in order groups that is O(N²) pairs, so they are not
// listed; the module may go once every module of a lower order has gone.
func Order(mods *module.Set) []string {
	list := mods.Modules() // by order, then name: the tie-break
	g := newGraph(list)
	placed := make([]bool, len(list))
	firstOpen := 0 // the lowest index not placed
	out := make([]string, 0, len(list))
	for len(out) < len(list) {
		i := firstOpen
		for ; i < len(list); i++ {
			if !placed[i] && g.free(i, firstOpen, func(name string) bool { return placed[g.index[name]] }) {
				break
			}
		}
		if i == len(list) {
			break // a cycle; Discover rejects them
		}
		placed[i] = true
		out = append(out, list[i].Name())
		for firstOpen < len(list) && placed[firstOpen] {
			firstOpen++
		}
	}
	return out
}

// graph is what the modules of a Set wait for, without the O(N²) pairs of
// order groups: module i of list (sorted by order, then name) waits, when
// it has no module.yaml, for list[:below[i]], every module of a lower
// order; with module.yaml, for what it requires.
type graph struct {
	list  []*module.Module
	index map[string]int
	below []int
}

func newGraph(list []*module.Module) *graph {
	g := &graph{list: list, index: make(map[string]int, len(list)), below: make([]int, len(list))}
	for i, m := range list {
		g.index[m.Name()] = i
		g.below[i] = sort.Search(len(list), func(j int) bool { return list[j].Order() >= m.Order() })
	}
	return g
}

// free reports whether module i waits for nothing that is still open:
// when it has module.yaml, every module it requires is done(name); without,
// every module of a lower order is, which is when the lowest open index
// (firstOpen) is at or past them.
func (g *graph) free(i, firstOpen int, done func(name string) bool) bool {
	m := g.list[i]
	if !m.HasDefinition() {
		return firstOpen >= g.below[i]
	}
	for _, req := range m.Requires() {
		if !done(req) {
			return false
		}
	}
	return true
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
	applied             // its first attempt applied its release and waits for its objects
	attempted           // an attempt ended and it is not ready
	ready               // an attempt ended with the module ready
)

// Schedule walks one converge's modules through their dependency graph:
// a module starts once every module it requires (module.yaml) is ready
// and every module of a lower order that it waits for (no module.yaml)
// applied its release in its first attempt (or finished that attempt):
// an order group waits for the Helm step of the groups before it, not for
// their objects to be ready. Independent modules start together; the
// module pool runs them in parallel. A Schedule is not safe for
// concurrent use: its owner serialises calls.
//
// Each call costs O(N) for N modules in the run (plus their
// requirements): the order groups' waits are answered from the lowest
// order still open, never pair by pair (at N=1000 a pairwise walk took 44 %
// of the operator's CPU during a converge).
type Schedule struct {
	names []string // in start order
	mods  map[string]*module.Module
	state map[string]progress
	// critical lists the run's critical modules; nil until first asked.
	critical []string
}

// NewSchedule returns the schedule of the modules in run.
func NewSchedule(mods *module.Set, run []string) *Schedule {
	s := &Schedule{state: map[string]progress{}, mods: map[string]*module.Module{}}
	inRun := map[string]bool{}
	for _, n := range run {
		inRun[n] = true
	}
	for _, n := range Order(mods) {
		m, _ := mods.Module(n)
		s.mods[n] = m
		if inRun[n] {
			s.names = append(s.names, n)
			s.state[n] = notStarted
		}
	}
	return s
}

// Next returns the modules that may start now, in start order, and marks
// them started.
func (s *Schedule) Next() []string {
	var out []string
	low := s.lowestOpenOrder()
	for _, n := range s.names {
		if s.state[n] == notStarted && s.free(n, low) {
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

// Applied records that a module's first attempt applied its release and
// waits for its objects to be ready: the modules of higher orders without
// module.yaml may start. A module not started, or not in the schedule, is
// ignored.
func (s *Schedule) Applied(name string) {
	if s.state[name] == started {
		s.state[name] = applied
	}
}

// Done reports whether the converge's pass is over: no first attempt is
// running and no module may start. Modules left waiting for a requirement
// that is not ready start later, when it becomes ready.
func (s *Schedule) Done() bool {
	low := s.lowestOpenOrder()
	for _, n := range s.names {
		if s.state[n] == started || s.state[n] == applied || (s.state[n] == notStarted && s.free(n, low)) {
			return false
		}
	}
	return true
}

// Ready reports whether a module of the schedule was ready after its last
// attempt.
func (s *Schedule) Ready(name string) bool { return s.state[name] == ready }

// WaitingFor returns the modules that have not released a module yet, in
// start order: what its module.yaml requires and is not ready (also when
// outside the run), or, without module.yaml, the modules of the run of a
// lower order whose first attempt has not applied its release.
func (s *Schedule) WaitingFor(name string) []string {
	m := s.mods[name]
	if m == nil {
		return nil
	}
	out := s.waitingForCritical(name)
	if m.HasDefinition() {
		for _, n := range s.names {
			if slices.Contains(m.Requires(), n) && s.state[n] != ready {
				out = append(out, n)
			}
		}
		for _, req := range m.Requires() {
			if _, inRun := s.state[req]; !inRun {
				out = append(out, req)
			}
		}
		return out
	}
	for _, n := range s.names {
		if s.open(n) && s.mods[n].Order() < m.Order() {
			out = append(out, n)
		}
	}
	return out
}

// open reports whether a module of the run has not applied its release
// in its first attempt, nor finished that attempt.
func (s *Schedule) open(name string) bool {
	st := s.state[name]
	return st == notStarted || st == started
}

// lowestOpenOrder returns the lowest order of a module of the run whose
// first attempt has not ended; math.MaxInt when there is none.
func (s *Schedule) lowestOpenOrder() int {
	low := math.MaxInt
	for _, n := range s.names {
		if s.open(n) {
			low = min(low, s.mods[n].Order())
		}
	}
	return low
}

// free reports whether a module waits for nothing, given the lowest order
// still open: with module.yaml, every module it requires is ready (one
// outside the run never is); without, no module of a lower order is open.
func (s *Schedule) free(name string, lowestOpen int) bool {
	m := s.mods[name]
	if len(s.waitingForCritical(name)) > 0 {
		return false
	}
	if !m.HasDefinition() {
		return lowestOpen >= m.Order()
	}
	for _, req := range m.Requires() {
		if s.state[req] != ready {
			return false
		}
	}
	return true
}
