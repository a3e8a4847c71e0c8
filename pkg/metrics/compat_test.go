package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCompatGolden pins the established names derived from recorded
// metrics: per-kind splits of hook metrics, outcomes turned into error
// and success counters, histogram sums served as counters, live_ticks.
func TestCompatGolden(t *testing.T) {
	r := NewRecorder()
	failed := errors.New("exit code 1")
	r.HookRun("cert-manager", "hooks/ca.sh", "beforeHelm", 20*time.Millisecond, nil)
	r.HookRun("cert-manager", "hooks/ca.sh", "beforeHelm", 3*time.Second, failed)
	r.HookRun("", "hooks/global.sh", "onStartup", time.Second, nil)
	r.HookRun("", "hooks/global.sh", "every-minute", time.Second, failed)
	r.HookAllowedError("", "hooks/global.sh", "every-minute")
	r.HookAllowedError("ingress", "hooks/x.sh", "pods")
	r.ModuleRun("cert-manager", 4*time.Second, nil)
	r.ModuleRun("ingress", 400*time.Millisecond, failed)
	r.HelmOperation("cert-manager", "upgrade", 2*time.Second)
	r.HelmOperation("cert-manager", "skip", time.Millisecond)
	r.QueueLength("main", 3)
	r.QueueWait("main", 100*time.Millisecond)
	r.QueueWait("main", 400*time.Millisecond)
	r.Converge(10*time.Second, nil)
	r.Converge(time.Second, failed)
	r.ConfigError()
	r.ObjectsHealed("ingress", 2)

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	g := compatGatherer{g: r.registry, now: func() time.Time { return now }, start: start}
	now = start.Add(95 * time.Second)
	names := make([]string, 0, len(compatRules())+1)
	for _, rule := range compatRules() {
		names = append(names, rule.name)
	}
	compareGolden(t, g, "compat.prom", append(names, "addon_operator_live_ticks")...)

	// Our own names are still served, unchanged.
	compareGolden(t, g, "recorder-compat-own.prom", "addon_operator_hook_runs_total", "addon_operator_queue_length")
}

func TestCompatHandlerServesBothNames(t *testing.T) {
	r := NewRecorder()
	r.QueueLength("main", 2)
	rec := httptest.NewRecorder()
	r.CompatHandler(time.Now).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/metrics", http.NoBody))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`addon_operator_queue_length{queue="main"} 2`, `addon_operator_tasks_queue_length{queue="main"} 2`, "addon_operator_live_ticks 0"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
