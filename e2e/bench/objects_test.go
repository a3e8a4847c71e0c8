package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseCounter(t *testing.T) {
	text := `# TYPE addon_operator_module_object_writes_total counter
addon_operator_module_object_writes_total{operation="create"} 100
addon_operator_module_object_writes_total{operation="status"} 234
# TYPE addon_operator_converges_total counter
addon_operator_converges_total{outcome="success"} 2
`
	got, err := parseCounter(strings.NewReader(text), metricObjectWrites, "operation")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"create": 100, "status": 234}, got); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got, _ := parseCounter(strings.NewReader(text), "absent_total", "x"); len(got) != 0 {
		t.Errorf("absent family = %v, want empty", got)
	}
}

func TestObjectsMarkdown(t *testing.T) {
	runs := []ObjectsRun{
		{Objects: true, Wall: 11 * time.Second, Writes: map[string]int{"create": 100, "status": 230}, AtConverge: 320,
			Reconverge: 3 * time.Second, ReconvergeWrites: 150},
		{Objects: false, Wall: 10 * time.Second, Reconverge: 2 * time.Second},
	}
	md := ObjectsMarkdown(100, runs)
	for _, want := range []string{
		"| 100 | first (start to converged) | 10.0 s | 11.0 s | +10.0% | 330 (create 100, status 230; 320 when the converge ended) |",
		"| 100 | after a global change | 2.0 s | 3.0 s | +50.0% | 150 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table\n%s\nlacks row\n%s", md, want)
		}
	}
}
