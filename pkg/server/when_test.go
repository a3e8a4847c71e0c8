package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"this instant", now.Add(300 * time.Millisecond), "now"},
		{"seconds ahead", now.Add(4*time.Minute + 10*time.Second + 400*time.Millisecond), "in 4m10s"},
		{"seconds ago", now.Add(-42 * time.Second), "42s ago"},
		{"hours ahead", now.Add(2*time.Hour + 5*time.Minute + 20*time.Second), "in 2h5m"},
		{"a day ago", now.Add(-(25*time.Hour + 59*time.Minute + 50*time.Second)), "26h0m ago"},
		{"days ahead", now.Add(3*24*time.Hour + 4*time.Hour + 10*time.Minute), "in 3d4h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := relative(now, c.at); got != c.want {
				t.Errorf("relative(%s) = %q, want %q", c.at.Sub(now), got, c.want)
			}
		})
	}
}

// TestModulePageRunTimes: the module page shows the last run, the
// failed attempts, the next retry and the next scheduled run, each time
// relative to now with the absolute time in its title; a module without
// them shows none of the rows.
func TestModulePageRunTimes(t *testing.T) {
	// Each time lies 400 ms past a round figure, so that the page,
	// rendered up to 900 ms after now, still rounds to that figure.
	now := time.Now()
	last, retry, next := now.Add(-2*time.Minute+400*time.Millisecond), now.Add(40400*time.Millisecond), now.Add(7*time.Minute+30400*time.Millisecond)
	src := &pagesSource{fakeSource: newFakeSource(), detail: status.ModuleDetail{Times: status.RunTimes{
		LastRun: last, LastRunDuration: 1500 * time.Millisecond, Attempts: 3, NextRetry: retry, NextRun: next,
	}}}
	h := New(DefaultOptions(), src, discard()).Handler()
	body := get(t, h, http.MethodGet, "/modules/ingress").Body.String()
	for _, want := range []string{
		`<td id="last-run">ended <time datetime="` + rfc3339(last) + `" title="` + last.UTC().Format("2006-01-02 15:04:05 UTC") + `">2m0s ago</time>, took 1.5s</td>`,
		`<td id="attempts">3 in a row</td>`,
		`<td id="next-retry"><time datetime="` + rfc3339(retry) + `"`,
		`>in 40s</time></td>`,
		`<td id="next-run"><time datetime="` + rfc3339(next) + `" title="` + next.UTC().Format("2006-01-02 15:04:05 UTC") + `">in 7m30s</time> (schedule)</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	src.detail = status.ModuleDetail{}
	body = get(t, h, http.MethodGet, "/modules/ingress").Body.String()
	for _, id := range []string{"last-run", "attempts", "next-retry", "next-run"} {
		if strings.Contains(body, `id="`+id+`"`) {
			t.Errorf("a module without run times shows %s", id)
		}
	}
}
