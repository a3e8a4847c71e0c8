package operator

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// healed counts the release objects found deleted, by module.
const healed = "addon_operator_healed_objects_total"

func TestDeletedReleaseObjectIsRestored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.WaitReady()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	before, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := cms.Delete(t.Context(), "alpha", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Poll("alpha's ConfigMap to be restored", func() bool {
		cm, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
		return err == nil && cm.UID != before.UID
	})
	t.Logf("deleted release object restored %s after the delete", time.Since(deleted))
	if n := h.Metric(healed, map[string]string{"module": "alpha"}); n != 1 {
		t.Errorf("alpha's healed objects = %v, want 1", n)
	}
	// The uninstall of a disabled module is not healed.
	h.SetConfig(map[string]string{"alphaEnabled": "false"})
	h.Poll("alpha's release to be uninstalled", func() bool {
		_, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && h.ReleaseRevision("alpha") == 0
	})
	betaRuns := operatortest.RunsOf("beta", "success")
	betaBefore := h.Metric(operatortest.ModuleRuns, betaRuns)
	h.SetConfig(map[string]string{"alphaEnabled": "false", "beta": "sync: point"})
	h.WaitMetric(operatortest.ModuleRuns, betaRuns, "to grow", operatortest.AtLeast(betaBefore+1))
	if n := h.Metric(healed, nil); n != 1 {
		t.Errorf("healed objects after the uninstall = %v, want still 1", n)
	}
}

func TestDriftIsReportedAndRevertedOnRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.WaitReady()
	h.Stop()

	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["message"] = "edited-by-hand"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	h.start("--heal-drift")
	h.WaitReady() // of the new run
	if n := h.CountLog("release object drifted from its manifest", map[string]string{"module": "alpha", "name": "alpha", "fields": ".data.message"}); n != 1 {
		t.Errorf("drift log lines naming .data.message = %d, want 1", n)
	}
	h.Poll("alpha's drift to be reverted", func() bool { return h.alphaData()["message"] == "from-values-yaml" })
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha revision = %d, want 1: reverting drift makes no new revision", got)
	}
}
