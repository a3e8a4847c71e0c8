package module

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ExclusiveLosers returns, for each exclusiveGroup (module.yaml) of which
// more than one of the enabled modules is a member, the members to keep
// disabled, each mapped to the member that stays: the first in module
// order of those in preferred (the modules enabled before), else the
// first in module order. Modules not in the Set are ignored.
func (s *Set) ExclusiveLosers(enabled []string, preferred map[string]bool) map[string]string {
	on := map[string]bool{}
	for _, n := range enabled {
		on[n] = true
	}
	members := map[string][]string{} // group -> enabled members in module order
	for _, m := range s.modules {
		if g := m.ExclusiveGroup(); g != "" && on[m.name] {
			members[g] = append(members[g], m.name)
		}
	}
	losers := map[string]string{}
	for _, list := range members {
		if len(list) < 2 {
			continue
		}
		winner := list[0]
		if i := slices.IndexFunc(list, func(n string) bool { return preferred[n] }); i >= 0 {
			winner = list[i]
		}
		for _, n := range list {
			if n != winner {
				losers[n] = winner
			}
		}
	}
	return losers
}

// ExclusiveReason says why a module is kept disabled for the module of its
// exclusiveGroup that stays enabled.
func (s *Set) ExclusiveReason(loser, winner string) string {
	m, _ := s.Module(loser)
	return fmt.Sprintf("exclusiveGroup %q: module %s is enabled, and at most one module of the group may be", m.ExclusiveGroup(), winner)
}

// ExclusiveConflicts checks a change of enabled states against the
// exclusiveGroups: after is every module's enabled state once the change
// is in force, switchedOn the modules the change enables that were not
// enabled. Each group that would have two enabled members, one of them
// switched on, is one error naming the group and its enabled members.
func (s *Set) ExclusiveConflicts(after, switchedOn map[string]bool) []error {
	members := map[string][]string{}
	touched := map[string]bool{}
	for _, m := range s.modules {
		g := m.ExclusiveGroup()
		if g == "" || !after[m.name] {
			continue
		}
		members[g] = append(members[g], m.name)
		if switchedOn[m.name] {
			touched[g] = true
		}
	}
	var errs []error
	for _, g := range slices.Sorted(maps.Keys(members)) {
		if len(members[g]) > 1 && touched[g] {
			errs = append(errs, fmt.Errorf("exclusiveGroup %q: modules %s would be enabled together; at most one module of the group may be: disable the other first",
				g, strings.Join(members[g], ", ")))
		}
	}
	return errs
}
