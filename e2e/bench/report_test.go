package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{"none", nil, 0},
		{"odd", []time.Duration{5, 1, 3}, 3},
		{"even", []time.Duration{4, 1, 2, 8}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestRows(t *testing.T) {
	ms := time.Millisecond
	samples := func(ds ...time.Duration) []Sample {
		s := make([]Sample, 0, len(ds))
		for _, d := range ds {
			s = append(s, Sample{Total: d})
		}
		return s
	}
	r := Result{
		N: 100, Converge: Converge{Wall: 12 * time.Second},
		Change: samples(200*ms, 250*ms, 900*ms), Event: samples(400*ms, 350*ms, 100*ms, 500*ms),
		IdleCPU: 0.2, PeakRSS: 88e6, Mem: MemPeak{Anon: 38e6, File: 50e6, Samples: 300}, NotHealed: true,
	}
	type row struct {
		Value string
		Met   bool
	}
	rows := Rows(&r)
	got := make([]row, 0, len(rows))
	for _, x := range rows {
		got = append(got, row{x.Value, x.Met})
	}
	want := []row{
		{"12.0 s", false},
		{"median 250 ms (200 ms .. 900 ms, 3 samples)", true},
		{"median 375 ms (100 ms .. 500 ms, 4 samples)", false},
		{"not healed within 30s (no healing)", false},
		{"0.20 % of a core", true},
		{"88.0 MB; sampled every 100 ms: anonymous peak 38.0 MB, binary and other file pages 50.0 MB at it", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestMarkdownHasARowPerMetric(t *testing.T) {
	md := Markdown([]Result{{N: 10, Healed: []time.Duration{time.Second}}, {N: 100, NotHealed: true}})
	if n := strings.Count(md, "\n"); n != 2+2*6 {
		t.Errorf("table has %d lines, want %d:\n%s", n, 2+2*6, md)
	}
	if !strings.Contains(md, "| 10 | delete to healed | median 1.0 s (1.0 s .. 1.0 s, 1 samples) | < 2 s | met |") ||
		!strings.Contains(md, "| 100 | delete to healed | not healed within 30s (no healing) | < 2 s | missed |") {
		t.Errorf("healed row missing:\n%s", md)
	}
}

func TestSweepMarkdown(t *testing.T) {
	run := func(conv, helm time.Duration) Converge {
		return Converge{
			Wall: conv, OperatorCPU: conv / 2, PeakRSS: 80e6, Mem: MemPeak{Anon: conv.Milliseconds() * 1000, File: 50e6, Samples: 10},
			API: APIRequests{RateLimitWait: helm / 10}, Phases: Phases{ModuleRuns: conv, RunSum: 2 * conv, HelmSum: helm},
		}
	}
	md := SweepMarkdown(100, []SweepResult{
		{Workers: 2, Runs: []Converge{run(30*time.Second, 50*time.Second), run(40*time.Second, 70*time.Second), run(35*time.Second, 60*time.Second)}},
	})
	want := "| 2 | 35.0 s | 30.0 s, 40.0 s, 35.0 s | 60.0 s | 2.0 | 17.5 s | 80.0 MB | 35.0 MB | 6.0 s |\n"
	if !strings.HasSuffix(md, want) {
		t.Errorf("sweep table ends\n%s\nwant row\n%s", md, want)
	}
}

func TestRowsPeakRSSWithoutSamples(t *testing.T) {
	rows := Rows(&Result{N: 10, PeakRSS: 120e6})
	if got := rows[len(rows)-1]; got.Value != "120.0 MB" || got.Met {
		t.Errorf("peak RSS row %+v, want 120.0 MB, missed", got)
	}
}

func TestPhasesMarkdownAPIRequests(t *testing.T) {
	ms := time.Millisecond
	reaction := func(requests int, wait time.Duration) Sample {
		return Sample{Total: 50 * ms, API: APIRequests{Requests: map[VerbCode]int{{"GET", "200"}: requests}, RateLimitWait: wait}}
	}
	r := Result{
		N: 10,
		Converge: Converge{API: APIRequests{
			Requests:      map[VerbCode]int{{"GET", "200"}: 152, {"GET", "404"}: 40, {"POST", "201"}: 50, {"PUT", "200"}: 10},
			RateLimitWait: 9500 * ms, Latency: 10700 * ms,
		}},
		Change: []Sample{reaction(24, 667*ms), reaction(25, 0), reaction(30, 900*ms)},
		Event:  []Sample{reaction(24, 1100*ms), reaction(27, 1200*ms)},
		Noop: [2]Noop{
			{Wall: 400 * ms, API: APIRequests{Requests: map[VerbCode]int{{"GET", "200"}: 30}}},
			{Wall: 300 * ms, API: APIRequests{Requests: map[VerbCode]int{{"GET", "200"}: 10}}},
		},
	}
	md := PhasesMarkdown([]Result{r})
	for _, want := range []string{
		"| 252 | 25.2 | 9.5 s | 10.7 s |\n",
		"| 10 | ConfigMap change | 50 ms | 0 ms | 0 ms | 0 ms | 0 ms | 25 | 667 ms |\n",
		"| 10 | event | 50 ms | 0 ms | 0 ms | 0 ms | 0 ms | 25.5 | 1.1 s |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("phases tables lack %q:\n%s", want, md)
		}
	}
	if got, want := APIMarkdown([]Result{r}), "| 10 | GET 192 (404: 40), POST 50, PUT 10 | 25.2 | 400 ms | GET 30 | 3.0 | 300 ms | GET 10 | 1.0 |\n"; !strings.HasSuffix(got, want) {
		t.Errorf("API table\n%s\nwant row %q", got, want)
	}
}

func TestDriftRows(t *testing.T) {
	r := &Result{N: 10, DriftReported: []time.Duration{300 * time.Millisecond, 250 * time.Millisecond, 3 * time.Second}}
	md := Markdown([]Result{*r})
	if !strings.Contains(md, "| 10 | edit to drift reported | median 300 ms, p99 3.0 s (3 samples) | < 2 s | met |") {
		t.Errorf("drift row missing:\n%s", md)
	}
	if strings.Contains(md, "edit to drift reverted") {
		t.Errorf("a revert row without revert samples:\n%s", md)
	}
	if got := percentile([]time.Duration{1, 2, 3, 4}, 0.5); got != 2 {
		t.Errorf("percentile 0.5 of 1..4 = %v, want 2", got)
	}
}

func TestWatchedMarkdown(t *testing.T) {
	if got := WatchedMarkdown([]Result{{N: 10}}); got != "" {
		t.Errorf("without a measurement: %q, want nothing", got)
	}
	got := WatchedMarkdown([]Result{{N: 10, Watched: &Watched{Objects: 10000, HeapBefore: 20e6, HeapAfter: 26e6, Wall: 90 * time.Second}}})
	if want := "| 10 | 10000 | 20.0 MB | 26.0 MB | 6.0 MB | 90.0 s |\n"; !strings.HasSuffix(got, want) {
		t.Errorf("table\n%s\nwant row %q", got, want)
	}
}

func TestBurstMarkdown(t *testing.T) {
	if got := BurstMarkdown([]Result{{N: 10}}); got != "" {
		t.Errorf("without a measurement: %q, want nothing", got)
	}
	got := BurstMarkdown([]Result{{N: 10, Burst: &Burst{
		Rate: 200, Duration: time.Minute, Sent: 11400, MaxQueue: 3, HeapBefore: 9e6, HeapAfter: 9.5e6, Settle: 400 * time.Millisecond,
	}}})
	if want := "| 10 | 200/s for 60.0 s | 11400 (190/s) | 3 | 9.0 MB | 9.5 MB | 400 ms |\n"; !strings.HasSuffix(got, want) {
		t.Errorf("table\n%s\nwant row %q", got, want)
	}
}

// Above 100 modules the rows hold the run to the targets set for 1000:
// converged in 30 s, a ConfigMap change in 100 ms, 250 MB at the peak.
func TestRowsTargetsFor1000Modules(t *testing.T) {
	ms := time.Millisecond
	run := func(wall, change time.Duration, rss float64) map[string]Row {
		rows := map[string]Row{}
		for _, r := range Rows(&Result{N: 1000, Converge: Converge{Wall: wall}, Change: []Sample{{Total: change}}, PeakRSS: int64(rss)}) {
			rows[r.Metric] = r
		}
		return rows
	}
	in := run(25*time.Second, 35*ms, 215e6)
	for _, m := range []string{"start to converged", "ConfigMap change to upgraded", "peak RSS (VmHWM)"} {
		if !in[m].Met {
			t.Errorf("%s: %+v, want met", m, in[m])
		}
	}
	if got := in["start to converged"].Target; got != "≤ 30.0 s (for 1000 modules)" {
		t.Errorf("target %q", got)
	}
	out := run(31*time.Second, 120*ms, 260e6)
	for _, m := range []string{"start to converged", "ConfigMap change to upgraded", "peak RSS (VmHWM)"} {
		if out[m].Met {
			t.Errorf("%s: %+v, want missed", m, out[m])
		}
	}
}
