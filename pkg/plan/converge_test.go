package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestForeign(t *testing.T) {
	modules := map[string]bool{"a": true, "b": true}
	tests := []struct {
		name      string
		unlabeled []string
		want      []string
	}{
		{name: "none"},
		{name: "named like modules: left to their runs", unlabeled: []string{"a", "b"}},
		{name: "named like no module: foreign", unlabeled: []string{"a", "gone", "other"}, want: []string{"gone", "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Foreign(tt.unlabeled, func(name string) bool { return modules[name] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("foreign releases (-want +got):\n%s", diff)
			}
		})
	}
}
