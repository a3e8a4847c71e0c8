package helm

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
)

// TestHistoryAndRollback installs, changes values, rolls back and reads the
// history: each revision's reason, and the rollback's values checksum is
// its target's.
func TestHistoryAndRollback(t *testing.T) {
	env := newTestEnv(t)
	ctx := t.Context()
	dir := echoChart(t, "x")
	if _, err := env.client.History(ctx, "echo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("history of no release: %v, want ErrNotFound", err)
	}
	for _, g := range []string{"hello", "bye"} {
		if _, err := env.client.Apply(ctx, echoRelease(dir, g)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.client.Rollback(ctx, "echo", 2); !errors.Is(err, ErrRollbackTarget) {
		t.Errorf("rollback to the last revision: %v, want ErrRollbackTarget", err)
	}
	if _, err := env.client.Rollback(ctx, "echo", 7); !errors.Is(err, ErrRollbackTarget) {
		t.Errorf("rollback to a revision that does not exist: %v, want ErrRollbackTarget", err)
	}
	rb, err := env.client.Rollback(ctx, "echo", 0)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := env.client.History(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Revision      int
		Status        string
		Reason        string
		Description   string
		SameValuesAs1 bool
	}
	got := make([]row, 0, len(revs))
	for _, r := range revs {
		got = append(got, row{r.Revision, r.Status, r.Reason, r.Description, r.ValuesChecksum == revs[0].ValuesChecksum})
		if r.Chart != "echo-0.1.0" {
			t.Errorf("revision %d chart %q, want echo-0.1.0 (no Chart.yaml: version 0.1.0)", r.Revision, r.Chart)
		}
	}
	want := []row{
		{1, "superseded", ReasonInstall, "Install complete", true},
		{2, "superseded", ReasonValuesChange, "Upgrade complete", false},
		{3, "deployed", ReasonRollback, "Rollback to 1", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if rb.Revision != 3 || rb.Reason != ReasonRollback {
		t.Errorf("rollback returned revision %d (%s), want 3 (rollback)", rb.Revision, rb.Reason)
	}
	if revs[2].ManifestChecksum != revs[0].ManifestChecksum {
		t.Error("the rollback did not take its target's manifest checksum: the operator would not upgrade again")
	}
}

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
	revs := revisionsOf([]*release.Release{first}, map[int]time.Time{1: time.Unix(1003, 0)})
	if revs[0].Duration != 3*time.Second {
		t.Errorf("duration %v, want 3s (modifiedAt - start, in seconds)", revs[0].Duration)
	}
}
