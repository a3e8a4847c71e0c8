package plan

import (
	"slices"

	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// DisableExclusive keeps at most one enabled module of each exclusiveGroup
// (module.yaml): the first in module order stays, the later ones are
// disabled with the reason.
func DisableExclusive(mods *module.Set, decisions []Decision) []Decision {
	var enabled []string
	for _, d := range decisions {
		if d.Enabled {
			enabled = append(enabled, d.Name)
		}
	}
	losers := mods.ExclusiveLosers(enabled, nil)
	if len(losers) == 0 {
		return decisions
	}
	out := slices.Clone(decisions)
	for i := range out {
		if winner, ok := losers[out[i].Name]; ok {
			out[i].Enabled, out[i].By, out[i].Reason = false, status.SourceExclusiveGroup, mods.ExclusiveReason(out[i].Name, winner)
		}
	}
	return out
}

// waitingForCritical returns the critical modules (module.yaml) of the run
// whose first attempt has not ended and that a module which is not
// critical waits for: critical modules converge first. A critical module
// that requires the module does not hold it.
func (s *Schedule) waitingForCritical(name string) []string {
	m := s.mods[name]
	if m == nil || m.Critical() {
		return nil
	}
	if s.critical == nil {
		s.critical = []string{}
		for _, n := range s.names {
			if s.mods[n].Critical() {
				s.critical = append(s.critical, n)
			}
		}
	}
	var out []string
	for _, n := range s.critical {
		if s.open(n) && m.Waits(s.mods[n]) == module.WaitAttempt {
			out = append(out, n)
		}
	}
	return out
}
