package bench

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMeasureHookCost runs both hooks a few times: MeasureHookCost fails
// unless each run wrote the expected values patch.
func TestMeasureHookCost(t *testing.T) {
	costs, err := MeasureHookCost(t.Context(), t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	kinds := make([]string, 0, len(costs))
	for _, c := range costs {
		kinds = append(kinds, c.Kind)
		if c.Runs != 3 || c.Median <= 0 || c.P99 < c.Median || c.CPU <= 0 || c.Size <= 0 {
			t.Errorf("%s: implausible cost %+v", c.Kind, c)
		}
	}
	if diff := cmp.Diff([]string{"bash+jq", "Go (pkg/sdk)"}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if md := HookCostMarkdown(costs); !strings.Contains(md, "| Go (pkg/sdk) | 3 |") {
		t.Errorf("markdown lacks the Go row:\n%s", md)
	}
}
