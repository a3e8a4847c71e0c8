package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScheduleCriticalFirst: modules that are not critical start once
// every critical module finished its first attempt, failed or not; one
// that a critical module requires is not held by that module.
func TestScheduleCriticalFirst(t *testing.T) {
	set := modulesOf(t, map[string]string{
		"010-legacy": "",
		"early":      "weight: 5\n",
		"core":       "weight: 50\ncritical: true\nrequires: {base: \"\"}\n",
		"base":       "weight: 60\n",
		"dns":        "weight: 70\ncritical: true\n",
	})
	s := NewSchedule(set, []string{"legacy", "early", "core", "base", "dns"})
	if diff := cmp.Diff([]string{"dns"}, s.Next()); diff != "" {
		t.Fatalf("first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"core", "dns"}, s.WaitingFor("early")); diff != "" {
		t.Errorf("early waits for (-want +got):\n%s", diff)
	}
	s.Finished("dns", false)
	if diff := cmp.Diff([]string{"base"}, s.Next()); diff != "" {
		t.Fatalf("after dns (-want +got):\n%s", diff)
	}
	s.Finished("base", true)
	if diff := cmp.Diff([]string{"core"}, s.Next()); diff != "" {
		t.Fatalf("after base (-want +got):\n%s", diff)
	}
	s.Finished("core", false)
	if diff := cmp.Diff([]string{"early"}, s.Next()); diff != "" {
		t.Fatalf("after the critical modules' attempts (-want +got):\n%s", diff)
	}
	s.Finished("early", true)
	if diff := cmp.Diff([]string{"legacy"}, s.Next()); diff != "" {
		t.Fatalf("order groups as before (-want +got):\n%s", diff)
	}
}

func TestDisableExclusive(t *testing.T) {
	set := modulesOf(t, map[string]string{
		"cni-a":  "weight: 10\nexclusiveGroup: cni\n",
		"cni-b":  "weight: 20\nexclusiveGroup: cni\n",
		"uses-b": "weight: 30\nrequires: {cni-b: \"\"}\n",
	})
	got := DisableUnmet(set, DisableExclusive(set, []Decision{
		{Name: "cni-a", Enabled: true, By: "configmap"},
		{Name: "cni-b", Enabled: true, By: "configmap"},
		{Name: "uses-b", Enabled: true, By: "configmap"},
	}))
	want := []Decision{
		{Name: "cni-a", Enabled: true, By: "configmap"},
		{Name: "cni-b", Enabled: false, By: "exclusive-group",
			Reason: `exclusiveGroup "cni": module cni-a is enabled, and at most one module of the group may be`},
		{Name: "uses-b", Enabled: false, By: "requirement", Reason: "requires cni-b, which is disabled"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}
