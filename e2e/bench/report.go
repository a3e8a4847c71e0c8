package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Targets: the design's for healing, drift and idle CPU; for start to
// converged, reactions and peak RSS those of issue 19, which are set for
// 100 and 1000 modules (targetsFor). event-to-upgraded has no target of
// its own and is held to the ConfigMap-change one.
const (
	targetHealed  = 2 * time.Second
	targetIdleCPU = 0.5 // percent of one core
)

// sizeTargets are the targets that depend on the number of modules.
type sizeTargets struct {
	converged time.Duration
	reaction  time.Duration
	peakRSS   float64 // bytes: MB, 10^6
	// label names the size the targets are set for, in the table.
	label string
}

// targetsFor returns the targets of a run of n modules: those set for 100
// modules up to 100 (also applied to smaller runs), those set for 1000
// above.
func targetsFor(n int) sizeTargets {
	if n > 100 {
		return sizeTargets{converged: 30 * time.Second, reaction: 100 * time.Millisecond, peakRSS: 250e6, label: "1000 modules"}
	}
	return sizeTargets{converged: 3 * time.Second, reaction: 300 * time.Millisecond, peakRSS: 100e6, label: "100 modules"}
}

// Row is one line of the results table.
type Row struct {
	N      int
	Metric string
	Value  string
	Target string
	Met    bool
}

// Rows turns a result into table rows, one per metric.
func Rows(r *Result) []Row {
	change, event := median(totals(r.Change)), median(totals(r.Event))
	healed := spreadOf(r.Healed)
	if r.NotHealed {
		healed = fmt.Sprintf("not healed within %s (no healing)", healLimit)
	}
	t := targetsFor(r.N)
	return append([]Row{
		{r.N, "start to converged", formatDuration(r.Converge.Wall), fmt.Sprintf("≤ %s (for %s)", formatDuration(t.converged), t.label), r.Converge.Wall <= t.converged},
		{r.N, "ConfigMap change to upgraded", spread(r.Change), "median ≤ " + formatDuration(t.reaction), change <= t.reaction},
		{r.N, "event to upgraded", spread(r.Event), "median ≤ " + formatDuration(t.reaction) + " (as ConfigMap change)", event <= t.reaction},
		{r.N, "delete to healed", healed, "< 2 s", !r.NotHealed && len(r.Healed) > 0 && median(r.Healed) < targetHealed},
		{r.N, "idle CPU", fmt.Sprintf("%.2f %% of a core", r.IdleCPU), "< 0.5 % of a core", r.IdleCPU < targetIdleCPU},
		{r.N, "peak RSS (VmHWM)", peakRSSValue(r.PeakRSS, r.Mem), fmt.Sprintf("≤ %.0f MB", t.peakRSS/1e6), float64(r.PeakRSS) <= t.peakRSS},
	}, driftRows(r)...)
}

// driftRows are the drift detection rows: median and p99 of the edit to
// report and, when measured, to revert times.
func driftRows(r *Result) []Row {
	var rows []Row
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"edit to drift reported", r.DriftReported}, {"edit to drift reverted", r.DriftReverted}} {
		if len(m.d) == 0 {
			continue
		}
		value := fmt.Sprintf("median %s, p99 %s (%d samples)", formatDuration(median(m.d)), formatDuration(percentile(m.d, 0.99)), len(m.d))
		rows = append(rows, Row{r.N, m.name, value, "< 2 s", median(m.d) < targetHealed})
	}
	return rows
}

// percentile returns the p-quantile of ds by the nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(ds))
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// peakRSSValue is VmHWM with the sampled split into the operator's own
// memory and the file pages, mostly the binary's code.
func peakRSSValue(hwm int64, m MemPeak) string {
	s := formatMB(hwm)
	if m.Samples == 0 {
		return s
	}
	return fmt.Sprintf("%s; sampled every %s: anonymous peak %s, binary and other file pages %s at it",
		s, formatDuration(memInterval), formatMB(m.Anon), formatMB(m.File))
}

// Markdown renders the results table.
func Markdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| N | metric | value | target | |\n| ---: | --- | --- | --- | --- |\n")
	for i := range results {
		for _, row := range Rows(&results[i]) {
			status := "missed"
			if row.Met {
				status = "met"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", row.N, row.Metric, row.Value, row.Target, status)
		}
	}
	return b.String()
}

// PhasesMarkdown renders where the first converge and the reactions spent
// their time, from the operator's debug log, and the requests they sent to
// the API server, from its /metrics.
func PhasesMarkdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| N | discovery | setup | hooks --config | planning | module runs (wall) |" +
		" Σ module runs | Σ Helm | of which before writes | Σ hooks + bindings | parallelism | CPU: operator | CPU: hooks |" +
		" API requests | per module | Σ rate-limit wait | Σ request latency (with the wait) |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i := range results {
		r, c := &results[i], results[i].Converge
		p := c.Phases
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s | %s | %d | %.1f | %s | %s |\n", r.N,
			formatDuration(p.Discovery), formatDuration(p.Setup), formatDuration(p.HookConfig),
			formatDuration(p.Planning), formatDuration(p.ModuleRuns), formatDuration(p.RunSum),
			formatDuration(p.HelmSum), formatDuration(p.HelmPrepSum), formatDuration(p.HookSum()), p.Parallelism(),
			formatDuration(c.OperatorCPU), formatDuration(c.HooksCPU),
			c.API.Total(), float64(c.API.Total())/float64(max(r.N, 1)), formatDuration(c.API.RateLimitWait), formatDuration(c.API.Latency))
	}
	b.WriteString("\n| N | reaction | median total | median module run | median Helm | of which before writes |" +
		" median hooks + bindings | median API requests | median Σ rate-limit wait |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i := range results {
		r := &results[i]
		for _, k := range []struct {
			name    string
			samples []Sample
		}{{"ConfigMap change", r.Change}, {"event", r.Event}} {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %g | %s |\n", r.N, k.name,
				formatDuration(median(totals(k.samples))), formatDuration(median(field(k.samples, sampleRun))),
				formatDuration(median(field(k.samples, sampleHelm))), formatDuration(median(field(k.samples, sampleHelmPrep))),
				formatDuration(median(field(k.samples, sampleHooks))),
				medianFloat(field(k.samples, sampleRequests)), formatDuration(median(field(k.samples, sampleRateLimitWait))))
		}
	}
	return b.String()
}

// APIMarkdown renders the first converge's requests by verb, with the
// status codes outside 2xx.
func APIMarkdown(results []Result) string {
	var b strings.Builder
	b.WriteString("| N | first converge: API requests by verb (codes outside 2xx) | per module |" +
		" converge with nothing to deploy: wall | its API requests by verb | per module | again: wall | API requests | per module |\n" +
		"| ---: | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |\n")
	for i := range results {
		r := &results[i]
		perModule := func(a APIRequests) float64 { return float64(a.Total()) / float64(r.N) }
		fmt.Fprintf(&b, "| %d | %s | %.1f | %s | %s | %.1f | %s | %s | %.1f |\n", r.N, r.Converge.API.ByVerb(), perModule(r.Converge.API),
			formatDuration(r.Noop[0].Wall), r.Noop[0].API.ByVerb(), perModule(r.Noop[0].API),
			formatDuration(r.Noop[1].Wall), r.Noop[1].API.ByVerb(), perModule(r.Noop[1].API))
	}
	return b.String()
}

// SweepMarkdown renders the worker sweep: medians over the rounds, and
// every round's start-to-converged.
func SweepMarkdown(n int, res []SweepResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| module workers | start to converged (N=%d), median | every round | median Σ Helm |"+
		" median parallelism | median operator CPU | median peak RSS at converge | median anonymous peak |"+
		" median Σ rate-limit wait |\n", n)
	b.WriteString("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range res {
		wall := field(r.Runs, func(c Converge) time.Duration { return c.Wall })
		each := make([]string, 0, len(wall))
		for _, d := range wall {
			each = append(each, formatDuration(d))
		}
		helm := field(r.Runs, func(c Converge) time.Duration { return c.Phases.HelmSum })
		cpu := field(r.Runs, func(c Converge) time.Duration { return c.OperatorCPU })
		par := field(r.Runs, func(c Converge) float64 { return c.Phases.Parallelism() })
		rss := field(r.Runs, func(c Converge) float64 { return float64(c.PeakRSS) / 1e6 })
		anon := field(r.Runs, func(c Converge) float64 { return float64(c.Mem.Anon) / 1e6 })
		wait := field(r.Runs, func(c Converge) time.Duration { return c.API.RateLimitWait })
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.1f | %s | %.1f MB | %.1f MB | %s |\n", r.Workers, formatDuration(median(wall)),
			strings.Join(each, ", "), formatDuration(median(helm)), medianFloat(par), formatDuration(median(cpu)), medianFloat(rss),
			medianFloat(anon), formatDuration(median(wait)))
	}
	return b.String()
}

// spread is "median (min .. max, n samples)" of the samples' totals.
func spread(samples []Sample) string { return spreadOf(totals(samples)) }

func spreadOf(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	return fmt.Sprintf("median %s (%s .. %s, %d samples)", formatDuration(median(d)),
		formatDuration(slices.Min(d)), formatDuration(slices.Max(d)), len(d))
}

// median of ds; the mean of the middle two for an even count, 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// medianFloat is median for plain numbers.
func medianFloat(xs []float64) float64 {
	ds := make([]time.Duration, 0, len(xs))
	for _, x := range xs {
		ds = append(ds, time.Duration(x*1e6))
	}
	return float64(median(ds)) / 1e6
}

func totals(s []Sample) []time.Duration {
	return field(s, func(x Sample) time.Duration { return x.Total })
}

func sampleRun(x Sample) time.Duration      { return x.Run }
func sampleHelm(x Sample) time.Duration     { return x.Helm }
func sampleHelmPrep(x Sample) time.Duration { return x.HelmPrep }

// sampleHooks is the module run's time outside Helm.
func sampleHooks(x Sample) time.Duration { return x.Run - x.Helm }

func sampleRequests(x Sample) float64            { return float64(x.API.Total()) }
func sampleRateLimitWait(x Sample) time.Duration { return x.API.RateLimitWait }

func field[T, V any](s []T, f func(T) V) []V {
	out := make([]V, 0, len(s))
	for _, x := range s {
		out = append(out, f(x))
	}
	return out
}

// formatMB prints bytes in MB (10^6).
func formatMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

// formatDuration prints milliseconds below a second, else seconds.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// WatchedMarkdown renders the heap with many watched objects; "" when
// none was measured.
func WatchedMarkdown(results []Result) string {
	var b strings.Builder
	for i := range results {
		w := results[i].Watched
		if w == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| N | objects watched by one binding | live heap before | after | difference | until the values list them all |\n" +
				"| ---: | ---: | ---: | ---: | ---: | ---: |\n")
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s |\n", results[i].N, w.Objects, formatMB(w.HeapBefore), formatMB(w.HeapAfter),
			formatMB(w.HeapAfter-w.HeapBefore), formatDuration(w.Wall))
	}
	return b.String()
}

// BurstMarkdown renders the event bursts; "" when none was measured.
func BurstMarkdown(results []Result) string {
	var b strings.Builder
	for i := range results {
		x := results[i].Burst
		if x == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| N | asked | updates sent | longest queue | live heap before | after | absorbed after the burst |\n" +
				"| ---: | --- | ---: | ---: | ---: | ---: | ---: |\n")
		}
		fmt.Fprintf(&b, "| %d | %d/s for %s | %d (%.0f/s) | %d | %s | %s | %s |\n", results[i].N, x.Rate, formatDuration(x.Duration),
			x.Sent, float64(x.Sent)/x.Duration.Seconds(), x.MaxQueue, formatMB(x.HeapBefore), formatMB(x.HeapAfter), formatDuration(x.Settle))
	}
	return b.String()
}
