package operatortest

import "testing"

func TestSumSamples(t *testing.T) {
	const text = `# TYPE addon_operator_module_runs_total counter
addon_operator_module_runs_total{module="alpha",outcome="error"} 2
addon_operator_module_runs_total{module="alpha",outcome="success"} 1
addon_operator_module_runs_total{module="beta",outcome="error"} 4
# TYPE addon_operator_kube_api_up gauge
addon_operator_kube_api_up 1
`
	tests := []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"every sample", "addon_operator_module_runs_total", nil, 7},
		{"one label", "addon_operator_module_runs_total", map[string]string{"outcome": "error"}, 6},
		{"two labels", "addon_operator_module_runs_total", RunsOf("alpha", "success"), 1},
		{"no such sample", "addon_operator_module_runs_total", RunsOf("gamma", "error"), 0},
		{"no such label", "addon_operator_module_runs_total", map[string]string{"queue": "main"}, 0},
		{"gauge", "addon_operator_kube_api_up", nil, 1},
		{"no such metric", "addon_operator_converges_total", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sumSamples(text, tt.metric, tt.labels)
			if err != nil || got != tt.want {
				t.Errorf("sumSamples = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := sumSamples("not metrics {", "x", nil); err == nil {
		t.Error("sumSamples of malformed text: no error")
	}
}

func TestContainsAll(t *testing.T) {
	for _, tt := range []struct {
		parts []string
		want  bool
	}{
		{nil, true},
		{[]string{"module flaky", "exit code 3"}, true},
		{[]string{"module flaky", "exit code 4"}, false},
	} {
		if got := containsAll("module flaky hook hooks/trace (beforeHelm): exit code 3", tt.parts); got != tt.want {
			t.Errorf("containsAll(%q) = %v, want %v", tt.parts, got, tt.want)
		}
	}
}
