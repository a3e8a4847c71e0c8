package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// line makes a log entry at start+at with the given attributes.
func line(start time.Time, at time.Duration, msg string, attrs ...any) Entry {
	f := map[string]any{"msg": msg, "time": start.Add(at).Format(time.RFC3339Nano)}
	for i := 0; i+1 < len(attrs); i += 2 {
		v := attrs[i+1]
		if d, ok := v.(time.Duration); ok {
			v = float64(d) // as decoded from slog's JSON
		}
		f[attrs[i].(string)] = v
	}
	return Entry{Fields: f}
}

func TestPhasesOf(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := time.Millisecond
	lines := []Entry{
		line(start, 100*ms, msgDiscovered),
		line(start, 900*ms, msgTaskDone, "task", taskStartup, "duration", 600*ms),
		line(start, 1000*ms, msgPlanned),
		line(start, 1400*ms, "creating 4 resource(s)", "release", "mod1"),
		line(start, 1500*ms, msgDeployed, "release", "mod1", "duration", 300*ms),
		line(start, 1500*ms, msgDeployed, "module", "mod1", "release", "mod1"), // the operator's, no duration
		line(start, 1600*ms, msgRunDone, "module", "mod1", "duration", 500*ms),
		line(start, 1700*ms, msgUpToDate, "release", "mod2", "duration", 100*ms),
		line(start, 1800*ms, msgRunDone, "module", "mod2", "duration", 700*ms),
		line(start, 2000*ms, msgConverged),
		line(start, 3000*ms, msgRunDone, "module", "mod1", "duration", 400*ms), // after the converge
	}
	want := Phases{
		Discovery: 100 * ms, Setup: 200 * ms, HookConfig: 600 * ms, Planning: 100 * ms, ModuleRuns: 1000 * ms,
		RunSum: 1200 * ms, HelmSum: 400 * ms, HelmPrepSum: 300 * ms, Runs: 2, Releases: 2,
	}
	got := phasesOf(start, lines)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if got.HookSum() != 800*ms || got.Parallelism() != 1.2 {
		t.Errorf("HookSum %v, Parallelism %v; want 800ms, 1.2", got.HookSum(), got.Parallelism())
	}
}

func TestSampleOf(t *testing.T) {
	start := time.Now()
	ms := time.Millisecond
	tests := []struct {
		name  string
		lines []Entry
		want  Sample
	}{
		{"run of the module", []Entry{
			line(start, 0, msgRunDone, "module", "mod10", "duration", 90*ms),
			line(start, 50*ms, "checking 4 resources for changes", "release", "mod1"),
			line(start, 60*ms, msgDeployed, "release", "mod1", "duration", 60*ms),
			line(start, 0, msgRunDone, "module", "mod1", "duration", 80*ms),
			line(start, 0, msgRunDone, "module", "mod1", "duration", 70*ms),
		}, Sample{Total: 100 * ms, Run: 80 * ms, Helm: 60 * ms, HelmPrep: 50 * ms}},
		{"no run logged", nil, Sample{Total: 100 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sampleOf(100*ms, "mod1", tt.lines)); diff != "" {
				t.Errorf("sample (-want +got):\n%s", diff)
			}
		})
	}
}
