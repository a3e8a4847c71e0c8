package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/module"
)

// pairwiseOrder is Order by its definition: repeatedly the first module (by
// order, then name) whose every module.Waits target is placed.
func pairwiseOrder(mods *module.Set) []string {
	list := mods.Modules()
	placed := map[string]bool{}
	var out []string
	for len(out) < len(list) {
		i := slices.IndexFunc(list, func(m *module.Module) bool {
			if placed[m.Name()] {
				return false
			}
			for _, o := range list {
				if m.Waits(o) != module.WaitNone && !placed[o.Name()] {
					return false
				}
			}
			return true
		})
		if i < 0 {
			return out
		}
		placed[list[i].Name()] = true
		out = append(out, list[i].Name())
	}
	return out
}

// pairwiseFree is when a module of the run may start by the definition of
// module.Waits: every WaitReady target is ready, every WaitAttempt target
// in the run has finished its first attempt.
func pairwiseFree(mods *module.Set, s *Schedule, name string) bool {
	m, _ := mods.Module(name)
	for _, o := range mods.Modules() {
		st, inRun := s.state[o.Name()]
		switch m.Waits(o) {
		case module.WaitReady:
			if st != ready {
				return false
			}
		case module.WaitAttempt:
			if inRun && (st == notStarted || st == started) {
				return false
			}
		case module.WaitNone:
		}
	}
	return true
}

// randomModules returns module directories in order groups, some with a
// module.yaml that requires modules made before it, and a random run.
// Requirements and weights may form a cycle; Discover rejects those sets.
func randomModules(r *rand.Rand) (map[string]string, []string) {
	dirs := map[string]string{}
	n := 3 + r.IntN(12)
	names, run := make([]string, 0, n), make([]string, 0, n)
	for i := range n {
		order := 10 * (1 + r.IntN(4))
		name := fmt.Sprintf("m%d", i)
		if r.IntN(3) == 0 {
			def := fmt.Sprintf("weight: %d\n", order)
			var reqs []string
			for _, other := range names {
				if r.IntN(3) == 0 {
					reqs = append(reqs, other+`: ""`)
				}
			}
			if len(reqs) > 0 {
				def += "requires: {" + strings.Join(reqs, ", ") + "}\n"
			}
			dirs[name] = def
		} else {
			dirs[fmt.Sprintf("%03d-%s", order, name)] = ""
		}
		names = append(names, name)
		if r.IntN(4) != 0 {
			run = append(run, name)
		}
	}
	return dirs, run
}

// TestScheduleMatchesPairwiseWaits checks Order and every step of a
// Schedule against module.Waits applied pair by pair, on random module
// sets that Discover accepts.
func TestScheduleMatchesPairwiseWaits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: a fixed seed, for repeatable test cases

	checked := 0
	for checked < 60 {
		dirs, run := randomModules(r)
		mods, err := tryModules(t, dirs)
		if err != nil {
			continue // a cycle through weights and requirements: Discover says so
		}
		checked++
		if diff := cmp.Diff(pairwiseOrder(mods), Order(mods)); diff != "" {
			t.Fatalf("modules %v: Order (-pairwise +got):\n%s", dirs, diff)
		}
		s := NewSchedule(mods, run)
		for step := 0; ; step++ {
			var want []string
			for _, n := range s.names {
				if s.state[n] == notStarted && pairwiseFree(mods, s, n) {
					want = append(want, n)
				}
			}
			wantDone := len(want) == 0 && !slices.ContainsFunc(s.names, func(n string) bool { return s.state[n] == started })
			if got := s.Done(); got != wantDone {
				t.Fatalf("modules %v, run %v, step %d: Done = %v, want %v", dirs, run, step, got, wantDone)
			}
			if diff := cmp.Diff(want, s.Next()); diff != "" {
				t.Fatalf("modules %v, run %v, step %d: Next (-pairwise +got):\n%s", dirs, run, step, diff)
			}
			var running []string
			for _, n := range s.names {
				if s.state[n] == started {
					running = append(running, n)
				}
			}
			if len(running) == 0 {
				break
			}
			// One running module ends, ready or not.
			s.Finished(running[r.IntN(len(running))], r.IntN(3) != 0)
		}
	}
}
