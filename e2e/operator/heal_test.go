package operator

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletedReleaseObjectIsRestored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.WaitLog(1, "first converge done", nil)
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
	if n := h.CountLog("release object deleted, running module to restore it", map[string]string{"module": "alpha", "name": "alpha"}); n != 1 {
		t.Errorf("heal log lines = %d, want 1", n)
	}
	// The uninstall of a disabled module is not healed.
	h.SetConfig(map[string]string{"alphaEnabled": "false"})
	h.Poll("alpha's release to be uninstalled", func() bool {
		_, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && h.ReleaseRevision("alpha") == 0
	})
	h.SetConfig(map[string]string{"alphaEnabled": "false", "beta": "sync: point"})
	h.WaitLog(1, "module run done", map[string]string{"module": "beta"})
	if n := h.CountLog("release object deleted, running module to restore it", nil); n != 1 {
		t.Errorf("heal log lines after the uninstall = %d, want still 1", n)
	}
}

func TestDriftIsReportedAndRevertedOnRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.WaitLog(1, "first converge done", nil)
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
	h.WaitLog(2, "first converge done", nil)
	if n := h.CountLog("release object drifted from its manifest", map[string]string{"module": "alpha", "name": "alpha", "fields": "data.message"}); n != 1 {
		t.Errorf("drift log lines naming data.message = %d, want 1", n)
	}
	h.WaitLog(1, "drift reverted", map[string]string{"module": "alpha"})
	if got := h.alphaData()["message"]; got != "from-values-yaml" {
		t.Errorf("alpha message after --heal-drift = %q, want the release's value", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha revision = %d, want 1: reverting drift makes no new revision", got)
	}
}
