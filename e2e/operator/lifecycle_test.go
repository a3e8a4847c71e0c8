package operator

import (
	"testing"
)

// startupTrace is the lifecycle of a first start with the fixture's
// defaults: alpha and beta enabled, gamma disabled, delta disabled by its
// enabled script after seeing alpha and beta.
func startupTrace() []string {
	return []string{
		"global:onStartup",
		"global:beforeAll",
		`delta:enabled:["alpha","beta"]`,
		"alpha:onStartup", "alpha:beforeHelm", "alpha:afterHelm",
		"beta:onStartup", "beta:beforeHelm", "beta:afterHelm",
		"global:afterAll",
	}
}

func TestStartup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.expectTrace(0, startupTrace()...)
	h.WaitReady()

	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1", got)
	}
	want := map[string]string{"message": "from-values-yaml", "greeting": "hello", "fromHook": "patched"}
	got := h.alphaData()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("alpha ConfigMap %s = %q, want %q (values files, global values and hook patch reach Helm)", k, got[k], v)
		}
	}
	for _, name := range []string{"beta", "gamma", "delta"} {
		if got := h.ReleaseRevision(name); got != 0 {
			t.Errorf("%s release revision = %d, want none", name, got)
		}
	}
}
