package operator

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMigrationOfAModuleSet takes over a namespace where an earlier
// operator ran the same module set: its releases carry no ownership label,
// one of them belongs to a module that was removed since, and its
// ConfigMap was written for YAML readers of the same words. Started with
// the migration switch, the operator adopts the releases in place,
// upgrades the module's, purges the removed module's and reads the
// ConfigMap's words as strings.
func TestMigrationOfAModuleSet(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installUnlabeled("alpha", `apiVersion: v1
kind: ConfigMap
metadata:
  name: alpha
  labels:
    heritage: Helm
data:
  message: from-values-yaml
  greeting: "off"
  fromHook: none
`)
	h.installForeign("gone")
	before, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.SetConfig(map[string]string{"global": "greeting: off\n"})

	h.start("--adopt-unlabeled-releases")
	h.WaitLog(2, "release without ownership label adopted", nil)
	h.Poll("alpha's release upgraded and labelled ours, gone's purged", func() bool {
		_, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "gone", metav1.GetOptions{})
		return h.ReleaseRevision("alpha") == 2 && h.releaseOwned("alpha", 2) &&
			h.ReleaseRevision("gone") == 0 && apierrors.IsNotFound(err)
	})
	h.WaitReady()

	after, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Errorf("alpha's ConfigMap was recreated (uid %s, was %s), want it adopted in place", after.UID, before.UID)
	}
	if got := after.Data["greeting"]; got != "off" {
		t.Errorf("greeting = %q, want the ConfigMap's word off as a string", got)
	}
	if got := after.Data["fromHook"]; got != "patched" {
		t.Errorf("fromHook = %q, want alpha's hooks to have run on the adopted release", got)
	}
	if n := h.CountLog("release not created by addon-operator, not touched", nil); n != 0 {
		t.Errorf("%d releases reported as foreign, want none with the migration switch", n)
	}
}
