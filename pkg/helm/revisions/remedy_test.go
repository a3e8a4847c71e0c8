package revisions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/release"
)

func TestRemedy(t *testing.T) {
	rev := func(v int, s release.Status) *release.Release {
		return &release.Release{Version: v, Info: &release.Info{Status: s}}
	}
	upgradeFailed := []*release.Release{rev(3, release.StatusFailed), rev(1, release.StatusSuperseded), rev(2, release.StatusDeployed)}
	tests := []struct {
		name    string
		history []*release.Release
		r       Remediation
		want    Remedy
	}{
		{name: "no release", r: RemediationRollback},
		{name: "deployed", history: []*release.Release{rev(1, release.StatusSuperseded), rev(2, release.StatusDeployed)}, r: RemediationRollback},
		{name: "none", history: upgradeFailed, r: RemediationNone},
		{name: "failed upgrade rolled back", history: upgradeFailed, r: RemediationRollback,
			want: Remedy{Action: "rollback", Failed: 3, Target: 2}},
		{name: "failed upgrade uninstalled", history: upgradeFailed, r: RemediationUninstall,
			want: Remedy{Action: "uninstall", Failed: 3}},
		{name: "failed upgrades after the deployed one", r: RemediationRollback,
			history: []*release.Release{rev(2, release.StatusDeployed), rev(3, release.StatusFailed), rev(4, release.StatusFailed)},
			want:    Remedy{Action: "rollback", Failed: 4, Target: 2}},
		{name: "failed install has nothing to roll back to", history: []*release.Release{rev(1, release.StatusFailed)}, r: RemediationRollback,
			want: Remedy{Action: "uninstall", Failed: 1}},
		{name: "interrupted upgrade", history: []*release.Release{rev(1, release.StatusDeployed), rev(2, release.StatusPendingUpgrade)},
			r: RemediationRollback, want: Remedy{Action: "rollback", Failed: 2, Target: 1}},
		{name: "uninstalled", history: []*release.Release{rev(1, release.StatusUninstalled)}, r: RemediationUninstall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, RemedyFor(tt.history, tt.r)); d != "" {
				t.Errorf("RemedyFor (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseRemediation(t *testing.T) {
	for _, s := range []string{"none", "rollback", "uninstall"} {
		if r, err := ParseRemediation(s); err != nil || string(r) != s {
			t.Errorf("ParseRemediation(%q) = %q, %v", s, r, err)
		}
	}
	if _, err := ParseRemediation("Rollback"); err == nil {
		t.Error("ParseRemediation(Rollback) is no error")
	}
}
