package revisions

import (
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/release"
)

// Remediation is what helm.Client.Remediate does to a release whose last
// revision failed.
type Remediation string

// Remediations.
const (
	// RemediationNone leaves a failed release as it is; the next Apply
	// upgrades over it.
	RemediationNone Remediation = "none"
	// RemediationRollback rolls a failed upgrade back to the last deployed
	// revision, with the chart's rollback hooks, and uninstalls a failed
	// install, which has no revision to roll back to.
	RemediationRollback Remediation = "rollback"
	// RemediationUninstall uninstalls a failed release, with the chart's
	// delete hooks; the next Apply installs it anew.
	RemediationUninstall Remediation = "uninstall"
)

// ParseRemediation returns the Remediation named s.
func ParseRemediation(s string) (Remediation, error) {
	switch r := Remediation(s); r {
	case RemediationNone, RemediationRollback, RemediationUninstall:
		return r, nil
	default:
		return "", fmt.Errorf("remediation %q: want %q, %q or %q", s, RemediationNone, RemediationRollback, RemediationUninstall)
	}
}

// Remedy is what helm.Client.Remediate did, or is to do (RemedyFor).
type Remedy struct {
	// Action is "rollback", "uninstall", or empty when nothing was done:
	// the last revision is not failed, or the remediation is none.
	Action string
	// Failed is the failed revision remediated.
	Failed int
	// Target is the revision rolled back to; 0 for an uninstall.
	Target int
}

// RemedyFor decides what remediation r does to a release with history (in
// any order): nothing unless the last revision failed or was left pending;
// a rollback to the last deployed revision when there is one and r is
// rollback; an uninstall otherwise.
func RemedyFor(history []*release.Release, r Remediation) Remedy {
	if len(history) == 0 || r == RemediationNone || r == "" {
		return Remedy{}
	}
	byVersion := slices.SortedFunc(slices.Values(history), func(a, b *release.Release) int { return a.Version - b.Version })
	last := byVersion[len(byVersion)-1]
	switch last.Info.Status {
	case release.StatusFailed, release.StatusPendingInstall, release.StatusPendingUpgrade, release.StatusPendingRollback:
	default:
		return Remedy{}
	}
	out := Remedy{Action: string(RemediationUninstall), Failed: last.Version}
	if r != RemediationRollback {
		return out
	}
	for _, rel := range slices.Backward(byVersion) {
		if rel.Info.Status == release.StatusDeployed {
			out.Action, out.Target = string(RemediationRollback), rel.Version
			break
		}
	}
	return out
}
