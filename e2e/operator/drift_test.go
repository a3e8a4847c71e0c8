package operator

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// editAlpha changes alpha's ConfigMap as kubectl edit does.
func (h *harness) editAlpha(message string) {
	h.T.Helper()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(h.T.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	cm.Data["message"] = message
	if _, err := cms.Update(h.T.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		h.T.Fatal(err)
	}
}

// An edit is reported, and reverted, between module runs: the watch on the
// release's objects starts the check, no module run does.
func TestManualEditRevertedWithoutModuleRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("--heal-drift", "--drift-resync=0")
	h.WaitReady()
	alphaRuns := map[string]string{"module": "alpha"}
	runs := h.Metric(operatortest.ModuleRuns, alphaRuns)
	drift := map[string]string{"module": "alpha", "name": "alpha", "fields": ".data.message"}
	before := h.CountLog("release object drifted from its manifest", drift)

	edited := time.Now()
	h.editAlpha("edited-by-hand")
	h.WaitLog(before+1, "release object drifted from its manifest", drift)
	reported := time.Since(edited)
	h.Poll("alpha's drift to be reverted", func() bool { return h.alphaData()["message"] == "from-values-yaml" })
	t.Logf("edit reported after %s, reverted after %s", reported, time.Since(edited))

	if got := h.Metric(operatortest.ModuleRuns, alphaRuns); got != runs {
		t.Errorf("alpha module runs = %v after the edit, want still %v: the check needs no run", got, runs)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha revision = %d, want 1: reverting drift makes no new revision", got)
	}
}

// Without --heal-drift an edit is reported and left; the resync timer
// checks again without reporting the same drift twice.
func TestManualEditReportedOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("--drift-resync=300ms", "--log-level=debug")
	h.WaitReady()
	h.editAlpha("edited-by-hand")
	drift := map[string]string{"module": "alpha", "name": "alpha", "fields": ".data.message"}
	h.WaitLog(1, "release object drifted from its manifest", drift)
	h.WaitMetric("addon_operator_drifted_objects", map[string]string{"module": "alpha"}, "to be 1", func(v float64) bool { return v == 1 })
	h.WaitLog(1, "release object still drifted from its manifest", nil)
	if got := h.alphaData()["message"]; got != "edited-by-hand" {
		t.Errorf("alpha's message = %q, want the edit left in place", got)
	}
	if n := h.CountLog("release object drifted from its manifest", drift); n != 1 {
		t.Errorf("drift reported %d times, want once", n)
	}
}

// A module in maintenance keeps its hooks but its release is left alone:
// no upgrade, no restore, no revert. Leaving maintenance reconciles at once.
func TestMaintenanceStopsHealing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"alpha": "message: before"})
	h.start("--heal-drift", "--log-level=debug")
	h.WaitReady()
	h.setConfigKey("alphaMaintenance", "NoResourceReconciliation")
	h.WaitModule("alpha", "to be in maintenance", func(m status.ModuleStatus) bool { return m.Maintenance })
	h.WaitMetric("addon_operator_module_maintenance", map[string]string{"module": "alpha"}, "to be 1", func(v float64) bool { return v == 1 })

	// A values change runs the module's hooks, not Helm.
	alphaRuns := operatortest.RunsOf("alpha", "success")
	runs := h.Metric(operatortest.ModuleRuns, alphaRuns)
	h.setConfigKey("alpha", "message: in-maintenance")
	h.WaitMetric(operatortest.ModuleRuns, alphaRuns, "to grow", operatortest.AtLeast(runs+1))
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha revision in maintenance = %d, want 1", got)
	}

	// An edit is reported, not reverted.
	h.editAlpha("edited-in-maintenance")
	h.WaitLog(1, "release object drifted from its manifest", map[string]string{"module": "alpha", "fields": ".data.message"})
	if got := h.alphaData()["message"]; got != "edited-in-maintenance" {
		t.Errorf("alpha's message = %q, want the edit left in maintenance", got)
	}

	// A deletion is not restored.
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	if err := cms.Delete(t.Context(), "alpha", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.WaitLog(1, "release object deleted; module in maintenance, not restored", map[string]string{"module": "alpha"})
	if _, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("alpha's ConfigMap in maintenance: %v, want it left deleted", err)
	}

	h.setConfigKey("alphaMaintenance", "")
	h.Poll("alpha's release to be upgraded with the new values", func() bool {
		return h.alphaData()["message"] == "in-maintenance"
	})
	h.WaitModule("alpha", "to leave maintenance", func(m status.ModuleStatus) bool { return !m.Maintenance && m.Phase == status.PhaseReady })
}
