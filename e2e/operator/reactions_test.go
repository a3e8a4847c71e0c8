package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnableModuleThroughConfigMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	mark := h.expectTrace(0, startupTrace()...)

	h.SetConfig(map[string]string{"gammaEnabled": "true"})
	h.expectTrace(mark,
		"global:beforeAll",
		`delta:enabled:["alpha","beta","gamma"]`,
		"alpha:beforeHelm", "alpha:afterHelm",
		"beta:beforeHelm", "beta:afterHelm",
		"gamma:onStartup", "gamma:beforeHelm", "gamma:afterHelm",
		"global:afterAll",
	)
	if got := h.ReleaseRevision("gamma"); got != 1 {
		t.Errorf("gamma release revision = %d, want 1 (a chart without Chart.yaml)", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1: nothing of alpha changed", got)
	}
}

func TestDisableModuleWithOnlyItsEnabledKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// alpha has a section of its own; only its Enabled key changes below.
	h.SetConfig(map[string]string{"alpha": "message: configured"})
	h.start()
	mark := h.expectTrace(0, startupTrace()...)
	if got := h.alphaData()["message"]; got != "configured" {
		t.Fatalf("alpha message = %q, want the ConfigMap's", got)
	}

	h.SetConfig(map[string]string{"alpha": "message: configured", "alphaEnabled": "false"})
	h.expectTrace(mark,
		"global:beforeAll",
		`delta:enabled:["beta"]`,
		"alpha:beforeDeleteHelm", "alpha:afterDeleteHelm",
		"beta:beforeHelm", "beta:afterHelm",
		"global:afterAll",
	)
	if got := h.ReleaseRevision("alpha"); got != 0 {
		t.Errorf("alpha release revision = %d after disabling, want no release", got)
	}
	if got := h.alphaData(); got != nil {
		t.Errorf("alpha's ConfigMap still exists after uninstall: %v", got)
	}
}

func TestModuleValuesChangeUpgradesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	mark := h.expectTrace(0, startupTrace()...)

	h.SetConfig(map[string]string{"alpha": "message: changed"})
	mark = h.expectTrace(mark, "alpha:beforeHelm", "alpha:afterHelm")
	if got := h.alphaData()["message"]; got != "changed" {
		t.Errorf("alpha message = %q, want changed", got)
	}
	// A later change to another module is a sync point: by then any second
	// alpha upgrade would have happened.
	h.SetConfig(map[string]string{"alpha": "message: changed", "beta": "x: 1"})
	h.expectTrace(mark, "beta:beforeHelm", "beta:afterHelm")
	if got := h.ReleaseRevision("alpha"); got != 2 {
		t.Errorf("alpha release revision = %d, want 2 (exactly one upgrade)", got)
	}
}

func TestGlobalValuesChangeConverges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	mark := h.expectTrace(0, startupTrace()...)

	h.SetConfig(map[string]string{"global": "greeting: hi-there"})
	h.expectTrace(mark,
		"global:beforeAll",
		`delta:enabled:["alpha","beta"]`,
		"alpha:beforeHelm", "alpha:afterHelm",
		"beta:beforeHelm", "beta:afterHelm",
		"global:afterAll",
	)
	if got := h.alphaData()["greeting"]; got != "hi-there" {
		t.Errorf("alpha greeting = %q, want the new global value", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 2 {
		t.Errorf("alpha release revision = %d, want 2", got)
	}
}

func TestRestartWithoutChangesMakesNoRevision(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	mark := h.expectTrace(0, startupTrace()...)
	h.WaitReady()
	h.Stop()

	h.start()
	h.expectTrace(mark, startupTrace()...)
	h.WaitReady() // of the new run
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision after restart = %d, want 1", got)
	}
}

func TestConfigPatchIsWrittenBackToConfigMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"configWriterEnabled": "true", "configWriter": "mine: kept"})
	h.start()
	trace := startupTrace()
	last := len(trace) - 1
	mark := h.expectTrace(0, append(trace[:last:last], "config-writer:beforeHelm", "global:afterAll")...)
	cm, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"configWriterEnabled": "true",
		"configWriter":        "mine: kept\nwritten: by-hook\n",
	}
	if diff := cmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("ConfigMap after the hook's config patch (-want +got):\n%s", diff)
	}
	// The write's own watch event changes nothing: the next trace lines come
	// from this beta change only.
	h.SetConfig(map[string]string{"configWriterEnabled": "true", "configWriter": "mine: kept\nwritten: by-hook\n", "beta": "x: 1"})
	h.expectTrace(mark, "beta:beforeHelm", "beta:afterHelm")
}
