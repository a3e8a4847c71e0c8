package operator

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

func TestFailingModuleDoesNotHoldUpOthers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := map[string]string{"stubbornEnabled": "true", "configWriterEnabled": "true"}
	h.SetConfig(cfg)
	h.start()
	// stubborn (order 850) fails; the later group (config-writer, 900) and
	// afterAll still run.
	trace := startupTrace()
	last := len(trace) - 1
	mark := h.expectTrace(0, append(trace[:last:last], "config-writer:beforeHelm", "global:afterAll")...)
	failed := operatortest.RunsOf("stubborn", "error")
	h.WaitMetric(operatortest.ModuleRuns, failed, "to reach 2", operatortest.AtLeast(2))
	h.WaitModule("stubborn", "last error from its hook", operatortest.ErrorContains("stubborn fails every time"))

	// A change to another module takes effect while stubborn keeps failing.
	failuresBefore := h.Metric(operatortest.ModuleRuns, failed)
	changed := time.Now()
	h.setConfigKey("alpha", "message: while-stubborn-fails")
	h.expectTrace(mark, "alpha:beforeHelm", "alpha:afterHelm")
	t.Logf("ConfigMap change to alpha applied %s after the write, while stubborn kept failing", time.Since(changed))
	if got := h.alphaData()["message"]; got != "while-stubborn-fails" {
		t.Errorf("alpha message = %q, want the new value", got)
	}
	h.WaitMetric(operatortest.ModuleRuns, failed, "to grow", operatortest.AtLeast(failuresBefore+1))
}

func TestConvergeRestartRunsEachModuleWithoutOverlap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := map[string]string{"slowEnabled": "true"}
	h.SetConfig(cfg)
	h.start()
	h.Poll("slow to start its first run", func() bool { return slices.Contains(h.readTrace(), "slow:start") })

	// A converge starts while the first one waits for slow.
	cfg["gammaEnabled"] = "true"
	h.SetConfig(cfg)
	h.Poll("gamma to start up in the new converge", func() bool { return slices.Contains(h.readTrace(), "gamma:afterHelm") })
	if err := os.WriteFile(h.trace+".release-slow", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.WaitReady()

	tr := h.readTrace()
	count := func(line string) int {
		n := 0
		for _, l := range tr {
			if l == line {
				n++
			}
		}
		return n
	}
	// slow ran again for the new converge (its first run saw the old
	// enabled set), never two at once.
	if got := count("slow:start"); got != 2 {
		t.Errorf("slow runs = %d, want 2: %v", got, tr)
	}
	open := false
	for _, l := range tr {
		switch l {
		case "slow:start":
			if open {
				t.Fatalf("two runs of slow overlapped: %v", tr)
			}
			open = true
		case "slow:end":
			open = false
		}
	}
	for line, want := range map[string]int{"gamma:onStartup": 1, "global:onStartup": 1, "global:afterAll": 1} {
		if got := count(line); got != want {
			t.Errorf("%s ran %d times, want %d: %v", line, got, want, tr)
		}
	}
}
