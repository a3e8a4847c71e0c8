package server

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// pagesSource is source with module runs and details, as the operator
// keeps them: cert-manager ran once and is ready, ingress-nginx failed
// and retries.
type pagesSource struct {
	*source
	now time.Time
}

func (p *pagesSource) at(s int) time.Time { return p.now.Add(time.Duration(s-100) * time.Second) }

func (p *pagesSource) ModuleRuns() []status.ModuleRuns {
	return []status.ModuleRuns{
		{Module: "cert-manager", Runs: []status.Run{{Start: p.at(0), End: p.at(60), Outcome: status.OutcomeSucceeded, Spans: []status.Span{
			{Step: status.StepRequirements, Start: p.at(0), End: p.at(10)},
			{Step: status.StepHooks, Start: p.at(10), End: p.at(20)},
			{Step: status.StepHelm, Start: p.at(20), End: p.at(45)},
			{Step: status.StepReadiness, Start: p.at(45), End: p.at(55)},
			{Step: status.StepHooks, Start: p.at(55), End: p.at(60)},
		}}}},
		{Module: "ingress-nginx", Runs: p.ingressRuns()},
	}
}

func (p *pagesSource) ingressRuns() []status.Run {
	return []status.Run{
		{Start: p.at(5), End: p.at(40), Outcome: status.OutcomeFailed, Error: `upgrade release "ingress-nginx": timed out`, Spans: []status.Span{
			{Step: status.StepHooks, Start: p.at(5), End: p.at(15)},
			{Step: status.StepHelm, Start: p.at(15), End: p.at(40)},
		}},
		{Start: p.at(40), Outcome: status.OutcomeRunning, Spans: []status.Span{
			{Step: status.StepBackoff, Start: p.at(40), End: p.at(80)},
			{Step: status.StepHooks, Start: p.at(80)},
		}},
	}
}

func (p *pagesSource) ModuleDetail(_ context.Context, name string) (status.ModuleDetail, error) {
	if name != "ingress-nginx" {
		return status.ModuleDetail{}, nil
	}
	long := "/" + strings.Repeat("a-long-path-segment-without-spaces", 12)
	return status.ModuleDetail{
		Times: status.RunTimes{LastRun: p.at(40), LastRunDuration: 35 * time.Second, Attempts: 1, NextRetry: p.at(110), NextRun: p.at(400)},
		Hooks: []status.HookInfo{{Name: "hooks/ingress-class.sh", Bindings: []status.BindingInfo{
			{Type: "beforeHelm", Detail: "order 10"},
			{Type: "kubernetes", Name: "ingress-classes", Detail: "networking.k8s.io/v1 IngressClass, queue main"},
		}}},
		Runs:      p.ingressRuns(),
		Revisions: []status.Revision{{Revision: 1, Updated: p.at(40), Status: "failed", Chart: "ingress-nginx-4.11.0", Description: "Upgrade failed: " + long}},
		Drift: &status.DriftCheck{Checked: p.at(90), Objects: []status.DriftObject{
			{Object: "ConfigMap ingress-nginx/controller", Fields: []string{"data.allow-snippet-annotations"}},
		}},
		Events:  []status.Event{{Last: p.at(40), Type: "Warning", Reason: "ModuleFailed", Message: "module ingress-nginx: " + long, Count: 1}},
		Objects: []status.ObjectStatus{{Object: "Deployment ingress-nginx/controller", Status: "InProgress", Message: "Available: 0/2"}},
	}, nil
}

// box is an element's place on the page, in CSS pixels from its top left.
type box struct {
	X, Y, W, H float64
}

// layout is what the page says of its width and of the elements asked
// about; a missing element's box is nil.
type layout struct {
	ScrollWidth int             `json:"scrollWidth"`
	InnerWidth  int             `json:"innerWidth"`
	Boxes       map[string]*box `json:"boxes"`
}

// measure asks the page for its width and the boxes of selectors' first
// elements.
func measure(b *browser, selectors []string) layout {
	b.t.Helper()
	sel, err := json.Marshal(selectors)
	if err != nil {
		b.t.Fatal(err)
	}
	var l layout
	b.eval(`(() => {
		const boxes = {};
		for (const s of `+string(sel)+`) {
			const e = document.querySelector(s);
			if (!e) { boxes[s] = null; continue; }
			const r = e.getBoundingClientRect();
			boxes[s] = {X: r.left + window.scrollX, Y: r.top + window.scrollY, W: r.width, H: r.height};
		}
		return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, boxes};
	})()`, &l)
	return l
}

// near reports whether c is within a few levels of want in each channel.
func near(c color.Color, want color.RGBA) bool {
	r, g, bl, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { x := int(a>>8) - int(b); return x > -8 && x < 8 }
	return d(r, want.R) && d(g, want.G) && d(bl, want.B)
}

// colours counts the distinct colours of img, up to limit.
func colours(img image.Image, limit int) int {
	seen := map[color.RGBA]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 3 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 3 {
			c, _ := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// TestPagesInChromium loads the overview with its converge timeline and a
// module's page in headless Chromium, on a phone's width and a desktop's:
// every section is there with a box of its own, nothing is wider than
// the screen, the screenshots show the timeline's bars in their colours
// where the layout puts them, and the console stays free of errors.
func TestPagesInChromium(t *testing.T) {
	src := &pagesSource{source: &source{}, now: time.Now()}
	src.ready.Store(true)
	r := runServer(t, src)
	b := startBrowser(t)
	helmGreen := color.RGBA{0x33, 0x99, 0x33, 0xff}
	pages := []struct {
		name, path string
		// inView must lie within the screen's width; present need only
		// be there (a table's rows may scroll within the table's box).
		inView, present []string
		// bar is a timeline rect drawn in helmGreen.
		bar string
	}{
		{
			name: "overview", path: "/",
			inView:  []string{"h1", "div.scroll:has(> #modules)", "#timeline", "#timeline-cert-manager svg", "#timeline-ingress-nginx svg", ".tl-legend"},
			present: []string{"#module-ingress-nginx a[href='/modules/ingress-nginx']", "#timeline-ingress-nginx rect.failed", "#queues"},
			bar:     "#timeline-cert-manager rect.step-helm",
		},
		{
			name: "module", path: "/modules/ingress-nginx",
			inView: []string{"#module-name", "div.scroll:has(> #summary)", "#timeline svg", "div.scroll:has(> #runs)", "div.scroll:has(> #hooks)",
				"div.scroll:has(> #revisions)", "#drift", "div.scroll:has(> #events)", "div.scroll:has(> #objects)"},
			present: []string{"#overview[href='/']", "#last-run time[title]", "#attempts", "#next-retry time[title]", "#next-run time[datetime][title]", "#runs tr.run", "#hooks tr.hook", "#revisions tr.revision", "#drift tr.drifted",
				"#events tr.event", "#objects tr.object", "#timeline rect.step-backoff"},
			bar: "#timeline-ingress-nginx rect.step-helm",
		},
	}
	for _, width := range []int{390, 1280} {
		for _, p := range pages {
			t.Run(fmt.Sprintf("%s %dpx", p.name, width), func(t *testing.T) {
				b.t = t
				b.problems = nil
				b.open(r.base+p.path, width)
				l := measure(b, append(append([]string{p.bar}, p.inView...), p.present...))
				if l.InnerWidth != width || l.ScrollWidth > l.InnerWidth {
					t.Errorf("the page is %d px wide on a screen of %d px (want %d): it overflows", l.ScrollWidth, l.InnerWidth, width)
				}
				for _, s := range append(append([]string{p.bar}, p.inView...), p.present...) {
					bx := l.Boxes[s]
					switch {
					case bx == nil:
						t.Errorf("no element %s", s)
					case bx.W <= 0 || bx.H <= 0:
						t.Errorf("%s has an empty box %+v", s, *bx)
					case slicesContain(p.inView, s) && (bx.X < 0 || bx.X+bx.W > float64(width)+0.5):
						t.Errorf("%s lies outside the screen's %d px: %+v", s, width, *bx)
					}
				}
				img := b.screenshot(fmt.Sprintf("%s-%d", p.name, width))
				if got := img.Bounds().Dx(); got != width {
					t.Errorf("the screenshot is %d px wide, want %d", got, width)
				}
				if n := colours(img, 6); n < 6 {
					t.Errorf("the screenshot has %d colours: it is blank", n)
				}
				if bx := l.Boxes[p.bar]; bx != nil {
					c := img.At(int(bx.X+bx.W/2), int(bx.Y+bx.H/2))
					if !near(c, helmGreen) {
						t.Errorf("the middle of %s (%+v) is %v on the screenshot, want Helm's green %v", p.bar, *bx, c, helmGreen)
					}
				}
				if len(b.problems) > 0 {
					t.Errorf("the console reported:\n%s", strings.Join(b.problems, "\n"))
				}
			})
		}
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
