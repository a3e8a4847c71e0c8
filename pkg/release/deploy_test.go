package release

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// outcomeReleases answers Apply with a fixed outcome.
type outcomeReleases struct {
	fakeReleases
	out helm.Outcome
}

func (f *outcomeReleases) Apply(context.Context, helm.Release) (helm.Outcome, error) {
	return f.out, nil
}

// countingDrift counts drift checks and finds none.
type countingDrift struct{ checks int }

func (d *countingDrift) Check(context.Context, string) ([]drift.Drift, error) {
	d.checks++
	return nil, nil
}

func (*countingDrift) Revert(context.Context, string, []drift.Drift) error { return nil }

// TestDeployChecksDriftUnlessFresh: objects an install has just created
// are not read back for a drift check; every other deploy, and a skip, is
// checked.
func TestDeployChecksDriftUnlessFresh(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "010-a"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "010-a", "Chart.yaml"), []byte("apiVersion: v2\nname: a\nversion: 0.1.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := set.Module("a")
	for _, tt := range []struct {
		name string
		out  helm.Outcome
		want int
	}{
		{"fresh install", helm.Outcome{Revision: 1, Reason: helm.ReasonNoRelease, Fresh: true}, 0},
		{"install over existing objects", helm.Outcome{Revision: 1, Reason: helm.ReasonNoRelease}, 1},
		{"upgrade", helm.Outcome{Revision: 2, Reason: helm.ReasonChecksumChanged}, 1},
		{"up to date", helm.Outcome{Revision: 2, Skipped: true}, 1},
	} {
		d := &countingDrift{}
		r := New(Options{Releases: &outcomeReleases{out: tt.out}, Drift: d, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
		if _, _, err := r.Deploy(t.Context(), m, nil); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.checks != tt.want {
			t.Errorf("%s: %d drift checks, want %d", tt.name, d.checks, tt.want)
		}
	}
}
