package release

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

// freshReleases installs every release anew, creating one ConfigMap.
type freshReleases struct{ fakeReleases }

func (*freshReleases) Apply(_ context.Context, r helm.Release) (helm.Outcome, error) {
	return helm.Outcome{
		Revision: 1, Manifest: "manifest of " + r.Name, Fresh: true,
		Created: []kubeclient.CreatedObject{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c", ResourceVersion: "41"}},
	}, nil
}

// seedingDrift records Seed calls; a Check is a failure of the test.
type seedingDrift struct {
	t      *testing.T
	seeded map[drift.Object]string
}

func (s *seedingDrift) Check(context.Context, string) ([]drift.Drift, error) {
	s.t.Error("drift checked after an install that created every object")
	return nil, nil
}

func (s *seedingDrift) Revert(context.Context, string, []drift.Drift) error { return nil }

func (s *seedingDrift) Seed(_ context.Context, _ string, created map[drift.Object]string) error {
	s.seeded = created
	return nil
}

// TestFreshInstallSeedsTheDriftChecker: the objects an install created are
// handed to the drift checker as clean at their versions, and the watch's
// report of those versions starts no check.
func TestFreshInstallSeedsTheDriftChecker(t *testing.T) {
	sd := &seedingDrift{t: t}
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	r := New(Options{Releases: &freshReleases{}, Drift: sd, Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if _, _, err := r.Deploy(t.Context(), testModule(t, "m"), nil); err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	want := map[drift.Object]string{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c"}: "41"}
	if diff := cmp.Diff(want, sd.seeded); diff != "" {
		t.Errorf("seeded (-want +got):\n%s", diff)
	}
	created := heal.Change{Module: "m", Object: heal.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c"}, ResourceVersion: "41"}
	if !r.seenAlready(created) {
		t.Error("the watch's report of the created version would start a drift check")
	}
	if r.seenAlready(heal.Change{Module: "m", Object: created.Object, ResourceVersion: "42"}) {
		t.Error("a later version counts as seen")
	}
}
