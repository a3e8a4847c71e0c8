package server

import (
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// timelineWidth is the SVG user units across a timeline row; bars are
// placed in them and the row scales to the page's width.
const timelineWidth = 1000

// minBarWidth keeps a run of a few milliseconds visible in a long window.
const minBarWidth = 2

// timeline is the converge timeline as the templates draw it: one row per
// module, a bar per span of its kept runs, over the window from the first
// span's start to now.
type timeline struct {
	Start, End time.Time
	// Span is the window's length in words.
	Span string
	Rows []timelineRow
}

// timelineRow is one module's bars.
type timelineRow struct {
	Module string
	Bars   []timelineBar
}

// timelineBar is one span, placed in timelineWidth units.
type timelineBar struct {
	X, Width float64
	Step     string
	// Failed marks the last span of a failed run.
	Failed bool
	// Title says what the bar is, for the browser's tooltip.
	Title string
}

// buildTimeline places the runs of the modules in order (modules without
// runs get no row) between the first span's start and now; spans still
// open end at now.
func buildTimeline(runs []status.ModuleRuns, order []string, now time.Time) timeline {
	byName := make(map[string][]status.Run, len(runs))
	start := now
	for _, m := range runs {
		byName[m.Module] = m.Runs
		for _, r := range m.Runs {
			if !r.Start.IsZero() && r.Start.Before(start) {
				start = r.Start
			}
		}
	}
	t := timeline{Start: start, End: now, Span: now.Sub(start).Round(time.Millisecond).String()}
	window := now.Sub(start)
	if window <= 0 {
		window = time.Millisecond
	}
	place := func(at time.Time) float64 {
		return float64(at.Sub(start)) / float64(window) * timelineWidth
	}
	for _, name := range order {
		rs := byName[name]
		if len(rs) == 0 {
			continue
		}
		row := timelineRow{Module: name}
		for _, r := range rs {
			for i, sp := range r.Spans {
				end := sp.End
				if end.IsZero() {
					end = now
				}
				x, w := place(sp.Start), place(end)-place(sp.Start)
				if w < minBarWidth {
					w = minBarWidth
				}
				x = min(max(x, 0), timelineWidth-w)
				row.Bars = append(row.Bars, timelineBar{
					X: round(x), Width: round(w), Step: sp.Step,
					Failed: r.Outcome == status.OutcomeFailed && i == len(r.Spans)-1,
					Title:  fmt.Sprintf("%s: %s %s for %s", name, sp.Step, sp.Start.UTC().Format("15:04:05.000"), end.Sub(sp.Start).Round(time.Millisecond)),
				})
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// round keeps two decimals, so the page stays short.
func round(f float64) float64 {
	return float64(int64(f*100+0.5)) / 100
}
