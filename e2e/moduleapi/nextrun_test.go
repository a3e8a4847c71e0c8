package moduleapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// TestNextRunTime: a module whose hook runs every 5 seconds shows when it
// runs next, and the time moves on as the schedule fires; a module without
// schedule bindings shows none.
func TestNextRunTime(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.writeFile("010-nr-tick/values.yaml", "nrTick: {}\n")
	hook := filepath.Join(h.modules, "010-nr-tick", "hooks", "tick")
	if err := os.MkdirAll(filepath.Dir(hook), 0o750); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ \"$1\" = --config ]; then\n  echo '{\"configVersion\":\"v1\",\"schedule\":[{\"name\":\"tick\",\"crontab\":\"*/5 * * * * *\"}]}'\nfi\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil { //nolint:gosec // an executable hook
		t.Fatal(err)
	}
	h.chartModule("020-nr-plain", "nrPlain")
	h.SetConfig(map[string]string{"nrTickEnabled": "true", "nrPlainEnabled": "true"})
	h.start().WaitReady()

	first := h.waitModule("nr-tick", "with a next run time", func(m v1.Module) bool { return m.Status.NextRunTime != nil })
	next := first.Status.NextRunTime.Time
	if d := time.Until(next); d > 6*time.Second || next.Second()%5 != 0 {
		t.Errorf("next run time %s (in %s): want a multiple of 5 seconds within 5 seconds", next, d)
	}
	h.waitModule("nr-tick", "with a later next run time", func(m v1.Module) bool {
		return m.Status.NextRunTime != nil && m.Status.NextRunTime.After(next)
	})
	plain := h.waitModule("nr-plain", "Ready", conditionTrue(v1.ConditionReady))
	if plain.Status.NextRunTime != nil {
		t.Errorf("nr-plain has no schedule bindings but a next run time %s", plain.Status.NextRunTime)
	}
}
