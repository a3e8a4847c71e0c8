package operator

import (
	"slices"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestV0HookConfigIsRefusedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"legacyHookEnabled": "true"})
	h.start()
	mark := h.expectTrace(0, startupTrace()...)
	m := h.WaitModule("legacy-hook", "last error says how to convert the v0 config", operatortest.ErrorContains(
		"900-legacy-hook/hooks/trace: configVersion v0 is not supported: convert it to v1",
		"onKubernetesEvent becomes kubernetes"))
	if m.Phase != status.PhaseFailed {
		t.Errorf("legacy-hook phase = %s, want %s", m.Phase, status.PhaseFailed)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1", got)
	}
	// The afterAll hook's trace line comes before the converge's end: a
	// change before that end would join a converge still running.
	h.WaitLog(1, "first converge done", nil)

	// A converge asks every enabled module to run again; the v0 module
	// does not, nor does it print its config again.
	h.SetConfig(map[string]string{"legacyHookEnabled": "true", "global": "greeting: again"})
	h.expectTrace(mark,
		"global:beforeAll",
		`delta:enabled:["alpha","beta"]`,
		"alpha:beforeHelm", "alpha:afterHelm",
		"beta:beforeHelm", "beta:afterHelm",
		"global:afterAll",
	)
	if got := h.ReleaseRevision("alpha"); got != 2 {
		t.Errorf("alpha release revision = %d, want 2", got)
	}
	if runs := h.Metric(operatortest.ModuleRuns, map[string]string{"module": "legacy-hook"}); runs != 0 {
		t.Errorf("legacy-hook runs = %v, want none", runs)
	}
	if n := h.CountLog("module hooks not loaded", map[string]string{"module": "legacy-hook", "error": "configVersion v0"}); n != 1 {
		t.Errorf("log lines reporting the v0 config = %d, want 1", n)
	}
	if i := slices.IndexFunc(h.readTrace(), func(l string) bool { return strings.HasPrefix(l, "legacy-hook:") }); i >= 0 {
		t.Errorf("the v0 hook ran: %s", h.readTrace()[i])
	}
	if m, _ := h.Newest().Module("legacy-hook"); m.Phase != status.PhaseFailed || !strings.Contains(m.LastError, "configVersion v0") {
		t.Errorf("legacy-hook after the converge = %+v, want phase %s with the v0 error", m, status.PhaseFailed)
	}
}
