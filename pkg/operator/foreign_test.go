package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestForeignReleasesAreReportedNotTouched(t *testing.T) {
	runner := &fakeRunner{}
	o, rel := newTestOperator(t, runner)
	// b is a module: its run refuses its release; gone is named like none.
	rel.unlabeled = []string{"b", "gone"}
	runUntil(t, o, o.Ready)
	var got []string
	for _, c := range o.Conditions() {
		if c.Type == status.ConditionForeignReleases {
			got = c.Releases
		}
	}
	if diff := cmp.Diff([]string{"gone"}, got); diff != "" {
		t.Errorf("releases of the %s condition (-want +got):\n%s", status.ConditionForeignReleases, diff)
	}
	for _, call := range runner.recorded() {
		if call == "uninstall:gone" {
			t.Errorf("foreign release gone was uninstalled")
		}
	}
}
