package revisions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/release"
)

func TestAbandonedRevisions(t *testing.T) {
	tests := []struct {
		name    string
		history []release.Status // revision i+1 has history[i]
		want    []int
	}{
		{name: "last deployed", history: []release.Status{release.StatusSuperseded, release.StatusDeployed}, want: []int{}},
		{
			name:    "after the last deployed",
			history: []release.Status{release.StatusSuperseded, release.StatusFailed, release.StatusDeployed, release.StatusFailed, release.StatusPendingUpgrade},
			want:    []int{4, 5},
		},
		{
			name:    "none deployed",
			history: []release.Status{release.StatusSuperseded, release.StatusFailed},
			want:    []int{1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var history []*release.Release
			for i, status := range tt.history {
				// Newest first: storage drivers list in no particular order.
				history = append([]*release.Release{{Version: i + 1, Info: &release.Info{Status: status}}}, history...)
			}
			abandoned := Abandoned(history)
			got := make([]int, 0, len(abandoned))
			for _, rel := range abandoned {
				got = append(got, rel.Version)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("abandoned revisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRevisionRange(t *testing.T) {
	revs := func(vs ...int) []*release.Release {
		out := make([]*release.Release, 0, len(vs))
		for _, v := range vs {
			out = append(out, &release.Release{Version: v})
		}
		return out
	}
	if got := Range(nil); got != "null" {
		t.Errorf("Range(nil) = %q, want null", got)
	}
	for _, vs := range [][]int{{2}, {4, 5, 6}, {17, 18}} {
		s := Range(revs(vs...))
		first, last, err := parseRevisionRange(s)
		if err != nil || first != vs[0] || last != vs[len(vs)-1] {
			t.Errorf("%v -> %q -> %d, %d, %v", vs, s, first, last, err)
		}
	}
	for _, bad := range []string{"", "3", "a-b", "5-4", "0-1", "-1-2"} {
		if _, _, err := parseRevisionRange(bad); err == nil {
			t.Errorf("parseRevisionRange(%q) accepted", bad)
		}
	}
}
