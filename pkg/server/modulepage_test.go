package server

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// pagesSource is a fake source that also keeps module runs and details.
type pagesSource struct {
	*fakeSource
	runs   []status.ModuleRuns
	detail status.ModuleDetail
	err    error
}

func (p *pagesSource) ModuleRuns() []status.ModuleRuns { return p.runs }

func (p *pagesSource) ModuleDetail(context.Context, string) (status.ModuleDetail, error) {
	return p.detail, p.err
}

// sec is s seconds into the timeline tests' clock.
func sec(s float64) time.Time {
	return time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
}

// TestBuildTimeline places runs of two modules over a 100 s window.
func TestBuildTimeline(t *testing.T) {
	runs := []status.ModuleRuns{
		{Module: "ingress", Runs: []status.Run{{Start: sec(0), End: sec(10), Outcome: status.OutcomeFailed, Spans: []status.Span{
			{Step: status.StepHooks, Start: sec(0), End: sec(5)},
			{Step: status.StepHelm, Start: sec(5), End: sec(10)},
		}}}},
		{Module: "cert-manager", Runs: []status.Run{{Start: sec(20), Outcome: status.OutcomeRunning, Spans: []status.Span{
			{Step: status.StepRequirements, Start: sec(20), End: sec(20.01)},
			{Step: status.StepReadiness, Start: sec(50)},
		}}}},
		{Module: "unlisted", Runs: []status.Run{{Start: sec(1), Spans: []status.Span{{Step: status.StepHooks, Start: sec(1)}}}}},
	}
	got := buildTimeline(runs, []string{"cert-manager", "ingress", "legacy"}, sec(100))
	want := timeline{Start: sec(0), End: sec(100), Span: "1m40s", Rows: []timelineRow{
		{Module: "cert-manager", Bars: []timelineBar{
			// 10 ms of 100 s is 0.1 units: widened to minBarWidth.
			{X: 200, Width: minBarWidth, Step: status.StepRequirements},
			// Still open: it ends at now.
			{X: 500, Width: 500, Step: status.StepReadiness},
		}},
		{Module: "ingress", Bars: []timelineBar{
			{X: 0, Width: 50, Step: status.StepHooks},
			{X: 50, Width: 50, Step: status.StepHelm, Failed: true},
		}},
	}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Title" }, cmp.Ignore())); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if title := got.Rows[1].Bars[1].Title; title != "ingress: helm 07:00:05.000 for 5s" {
		t.Errorf("bar title = %q", title)
	}
	if empty := buildTimeline(nil, []string{"a"}, sec(0)); len(empty.Rows) != 0 || empty.Span != "0s" {
		t.Errorf("a timeline without runs = %+v, want no rows over 0s", empty)
	}
}

// svgRect is a rect of the drawn timeline.
type svgRect struct {
	Class string  `xml:"class,attr"`
	X     float64 `xml:"x,attr"`
	Width float64 `xml:"width,attr"`
}

// drawnRows parses the overview's timeline rows: the SVG of each, by
// module.
func drawnRows(t *testing.T, page string) map[string][]svgRect {
	t.Helper()
	re := regexp.MustCompile(`(?s)<div class="tl-row" id="timeline-([^"]+)">.*?(<svg.*?</svg>)`)
	out := map[string][]svgRect{}
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		var svg struct {
			ViewBox string    `xml:"viewBox,attr"`
			Rects   []svgRect `xml:"rect"`
		}
		if err := xml.Unmarshal([]byte(m[2]), &svg); err != nil {
			t.Fatalf("the timeline of %s is not well-formed SVG: %v\n%s", m[1], err, m[2])
		}
		if svg.ViewBox != "0 0 "+strconv.Itoa(timelineWidth)+" 10" {
			t.Errorf("viewBox = %q", svg.ViewBox)
		}
		out[m[1]] = svg.Rects
	}
	return out
}

// TestOverviewDrawsTimeline checks that the overview draws each module's
// runs as SVG rects, in module order, and none without a ModulePages.
func TestOverviewDrawsTimeline(t *testing.T) {
	now := time.Now()
	src := &pagesSource{fakeSource: newFakeSource(), runs: []status.ModuleRuns{
		{Module: "ingress", Runs: []status.Run{{Start: now.Add(-time.Minute), End: now.Add(-30 * time.Second), Outcome: status.OutcomeFailed,
			Spans: []status.Span{{Step: status.StepHooks, Start: now.Add(-time.Minute), End: now.Add(-30 * time.Second)}}}}},
	}}
	body := get(t, New(DefaultOptions(), src, discard()).Handler(), http.MethodGet, "/").Body.String()
	rows := drawnRows(t, body)
	rects := rows["ingress"]
	if len(rows) != 1 || len(rects) != 1 {
		t.Fatalf("rows drawn = %+v, want one rect of ingress", rows)
	}
	if r := rects[0]; r.Class != "step-hooks failed" || r.X != 0 || r.Width < 490 || r.Width > 510 {
		t.Errorf("ingress's rect = %+v, want a failed hooks bar over the first half", r)
	}
	if !strings.Contains(body, `<a class="tl-name" href="/modules/ingress">ingress</a>`) {
		t.Errorf("the row does not link the module's page:\n%s", body)
	}
	plain := get(t, New(DefaultOptions(), newFakeSource(), discard()).Handler(), http.MethodGet, "/").Body.String()
	if strings.Contains(plain, `id="timeline"`) {
		t.Error("a source without runs got a timeline")
	}
}

// TestModulePage checks a module's page: every section with what the
// source said, 404 for an unknown module, and every text redacted.
func TestModulePage(t *testing.T) {
	now := time.Now()
	src := &pagesSource{fakeSource: newFakeSource(), detail: status.ModuleDetail{
		Hooks: []status.HookInfo{{Name: "hooks/sync.sh", Bindings: []status.BindingInfo{
			{Type: "beforeHelm", Detail: "order 10"}, {Type: "kubernetes", Name: "pods", Detail: "Pod, queue main"},
		}}},
		Runs: []status.Run{{Start: now.Add(-3 * time.Second), End: now, Outcome: status.OutcomeFailed, Error: "helm: " + leakedSecret,
			Spans: []status.Span{{Step: status.StepHelm, Start: now.Add(-3 * time.Second), End: now}}}},
		Revisions: []status.Revision{{Revision: 2, Updated: now, Status: "failed", Chart: "ingress-1.0.0", Description: "Upgrade failed: " + leakedSecret}},
		Drift:     &status.DriftCheck{Checked: now, Objects: []status.DriftObject{{Object: "ConfigMap ns/cm", Fields: []string{"data.key"}}}},
		Events:    []status.Event{{Last: now, Type: "Warning", Reason: "ModuleFailed", Message: "module ingress: " + leakedSecret, Count: 2}},
		Objects:   []status.ObjectStatus{{Object: "Deployment ns/web", Status: "InProgress", Message: "Available: 0/1 " + leakedSecret}},
		Errors:    []string{"objects: " + leakedSecret},
	}}
	opts := DefaultOptions()
	opts.Redact = redactLeaked
	h := New(opts, src, discard()).Handler()
	rec := get(t, h, http.MethodGet, "/modules/ingress")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /modules/ingress = %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{
		`<h1 id="module-name">ingress</h1>`,
		`<td class="Failed">Failed</td>`,
		`<tr class="hook"><td>hooks/sync.sh</td><td>beforeHelm</td><td></td><td>order 10</td></tr>`,
		`<tr class="hook"><td>hooks/sync.sh</td><td>kubernetes</td><td>pods</td><td>Pod, queue main</td></tr>`,
		`<td>3s</td><td class="Failed">Failed</td><td>helm 3s</td><td class="error">helm: [redacted]</td>`,
		`<td>2</td><td>` + now.UTC().Format("2006-01-02 15:04:05 UTC") + `</td><td>failed</td><td>ingress-1.0.0</td><td class="text">Upgrade failed: [redacted]</td>`,
		`1 object drifted.`,
		`<tr class="drifted"><td>ConfigMap ns/cm</td><td><code>data.key</code></td><td>false</td></tr>`,
		`<td>Warning</td><td>ModuleFailed</td><td>2</td><td class="text">module ingress: [redacted]</td>`,
		`<tr class="object"><td>Deployment ns/web</td><td class="InProgress">InProgress</td><td class="text">Available: 0/1 [redacted]</td></tr>`,
		`<p class="problem error">objects: [redacted]</p>`,
		`<div class="tl-row" id="timeline-ingress">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, leakedSecret) {
		t.Errorf("the page shows the secret:\n%s", body)
	}
	if rec := get(t, h, http.MethodGet, "/modules/nope"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /modules/nope = %d, want 404", rec.Code)
	}
	src.err = errors.New("no module " + leakedSecret)
	if body := get(t, h, http.MethodGet, "/modules/ingress").Body.String(); !strings.Contains(body, `<p class="problem error">no module [redacted]</p>`) {
		t.Errorf("a failing detail is not named, redacted, on the page:\n%s", body)
	}
	plain := get(t, New(opts, newFakeSource(), discard()).Handler(), http.MethodGet, "/modules/ingress")
	if plain.Code != http.StatusOK || !strings.Contains(plain.Body.String(), "no runs since the operator started") {
		t.Errorf("a source without details: %d\n%s", plain.Code, plain.Body.String())
	}
}
