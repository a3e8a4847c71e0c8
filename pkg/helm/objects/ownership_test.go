package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanOwnership(t *testing.T) {
	self := Owner{Release: "echo", Namespace: "addon-operator"}
	other := Owner{Release: "other", Namespace: "addon-operator"}
	tests := []struct {
		name    string
		object  liveObject
		unowned bool
		want    ownershipPlan
	}{
		{name: "own, labelled", object: liveObject{owner: self, helmLabeled: true}, want: ownershipPlan{own: 1}},
		{name: "own, Helm's label removed", object: liveObject{owner: self}, want: ownershipPlan{own: 1, adopt: []int{0}}},
		{name: "own release in another namespace", object: liveObject{ref: "x", owner: Owner{Release: "echo", Namespace: "elsewhere"}},
			want: ownershipPlan{conflicts: []Conflict{{Object: "x", Owner: Owner{Release: "echo", Namespace: "elsewhere"}}}}},
		{name: "no release", object: liveObject{ref: "x"}, want: ownershipPlan{conflicts: []Conflict{{Object: "x"}}}},
		{name: "no release, annotated true", object: liveObject{adopt: "true"}, want: ownershipPlan{adopt: []int{0}}},
		{name: "no release, annotated with the release", object: liveObject{adopt: "echo"}, want: ownershipPlan{adopt: []int{0}}},
		{name: "no release, annotated for another release", object: liveObject{ref: "x", adopt: "other"},
			want: ownershipPlan{conflicts: []Conflict{{Object: "x"}}}},
		{name: "no release, module may adopt", object: liveObject{}, unowned: true, want: ownershipPlan{adopt: []int{0}}},
		{name: "another release", object: liveObject{ref: "x", owner: other},
			want: ownershipPlan{conflicts: []Conflict{{Object: "x", Owner: other}}}},
		{name: "another release, annotated true", object: liveObject{ref: "x", owner: other, adopt: "true"},
			want: ownershipPlan{conflicts: []Conflict{{Object: "x", Owner: other}}}},
		{name: "another release, module may adopt unowned", object: liveObject{ref: "x", owner: other}, unowned: true,
			want: ownershipPlan{conflicts: []Conflict{{Object: "x", Owner: other}}}},
		{name: "another release, annotated with the release", object: liveObject{owner: other, adopt: "echo"}, want: ownershipPlan{adopt: []int{0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planOwnership([]liveObject{tt.object}, self, tt.unowned)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(ownershipPlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnershipConflictErrorMessage(t *testing.T) {
	err := &OwnershipConflictError{Release: "b", Conflicts: []Conflict{
		{Object: "ConfigMap ns/shared", Owner: Owner{Release: "a", Namespace: "ns"}},
		{Object: "ClusterRole viewer"},
	}}
	want := `objects exist that release "b" does not own, not taken: ConfigMap ns/shared (owner: release "a" in namespace "ns"), ` +
		`ClusterRole viewer (owner: no release); to hand one over, annotate it addon-operator.io/adopt=b, or delete it`
	if got := err.Error(); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}
