package revisions

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
)

func TestRevisionReasons(t *testing.T) {
	rel := func(v int, chartVersion, greeting, desc string, st release.Status) *release.Release {
		return &release.Release{Version: v, Info: &release.Info{Status: st, Description: desc},
			Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: chartVersion}},
			Config: map[string]any{"greeting": greeting}}
	}
	start := time.Unix(1000, 500)
	first := rel(1, "1.0.0", "a", "Install complete", release.StatusSuperseded)
	first.Info.LastDeployed = helmtime.Time{Time: start}
	for _, tc := range []struct {
		name       string
		prev, cur  *release.Release
		wantReason string
	}{
		{"first", nil, first, ReasonInstall},
		{"after uninstall", rel(1, "1.0.0", "a", "", release.StatusUninstalled), rel(2, "1.0.0", "a", "Install complete", release.StatusDeployed), ReasonInstall},
		{"chart version", first, rel(2, "1.1.0", "a", "Upgrade complete", release.StatusDeployed), ReasonUpgrade},
		{"values", first, rel(2, "1.0.0", "b", "Upgrade complete", release.StatusDeployed), ReasonValuesChange},
		{"same again", first, rel(2, "1.0.0", "a", "Upgrade complete", release.StatusDeployed), ReasonUpgrade},
		{"rollback", first, rel(2, "1.0.0", "a", "Rollback to 1", release.StatusDeployed), ReasonRollback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasonOf(tc.prev, tc.cur); got != tc.wantReason {
				t.Errorf("reason %q, want %q", got, tc.wantReason)
			}
		})
	}
	revs := Describe([]*release.Release{first}, map[int]time.Time{1: time.Unix(1003, 0)}, "addon-operator.io/checksum")
	if revs[0].Duration != 3*time.Second {
		t.Errorf("duration %v, want 3s (modifiedAt - start, in seconds)", revs[0].Duration)
	}
}
