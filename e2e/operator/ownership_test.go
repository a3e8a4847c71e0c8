package operator

import (
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// waitEvent polls for an Event on the operator's ConfigMap with reason
// whose note contains text.
func (h *harness) waitEvent(reason, text string) {
	h.T.Helper()
	h.Poll(reason+" event naming "+text, func() bool {
		list, err := h.Client.EventsV1().Events(h.Namespace).List(h.T.Context(), metav1.ListOptions{})
		if err != nil {
			h.T.Fatal(err)
		}
		for i := range list.Items {
			if e := &list.Items[i]; e.Regarding.Name == "addon-operator" && e.Reason == reason && strings.Contains(e.Note, text) {
				return true
			}
		}
		return false
	})
}

func TestObjectOfNoReleaseFailsModuleUntilHandedOver(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	byHand := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "alpha"}, Data: map[string]string{"message": "by-hand"}}
	if _, err := cms.Create(t.Context(), byHand, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	addr := operatortest.FreeAddress(t)
	h.start("--listen-address=" + addr)
	conflict := "ConfigMap " + h.Namespace + "/alpha (owner: no release)"
	h.WaitModule("alpha", "last error names the conflict", operatortest.ErrorContains(conflict))
	h.waitEvent("ModuleRunFailed", conflict)
	base := "http://" + addr
	if _, page, err := operatortest.HTTPGet(t, base+"/"); err != nil || !strings.Contains(page, conflict) {
		t.Errorf("status page does not name the conflict %q (err %v)", conflict, err)
	}
	if _, metrics, err := operatortest.HTTPGet(t, base+"/metrics"); err != nil || !strings.Contains(metrics, `addon_operator_module_runs_total{module="alpha",outcome="error"}`) {
		t.Errorf("/metrics lacks alpha's failed runs (err %v)", err)
	}
	cm, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "by-hand" || len(cm.Annotations) != 0 {
		t.Errorf("refused ConfigMap changed: data %v, annotations %v", cm.Data, cm.Annotations)
	}

	// Handed over, it is taken on the next retry.
	cm.Annotations = map[string]string{"addon-operator.io/adopt": "true"}
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Poll("alpha's ConfigMap to be adopted by release alpha", func() bool {
		cm, err := cms.Get(t.Context(), "alpha", metav1.GetOptions{})
		return err == nil && cm.Data["message"] == "from-values-yaml" && cm.Annotations["meta.helm.sh/release-name"] == "alpha"
	})
}

func TestDeletedReleaseRecordIsReportedAndRestored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start()
	h.WaitReady()
	before, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := h.Client.CoreV1().Secrets(h.Namespace)
	if err := secrets.DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm,name=alpha"}); err != nil {
		t.Fatal(err)
	}
	h.WaitLog(1, "release record deleted, the release history is lost; running module to install the release again",
		map[string]string{"module": "alpha", "kind": "Secret", "name": "sh.helm.release.v1.alpha.v1"})
	h.waitEvent("ReleaseRecordDeleted", "sh.helm.release.v1.alpha.v1")
	h.Poll("alpha's release record to come back", func() bool { return h.ReleaseRevision("alpha") == 1 })
	h.WaitLog(1, "release records were deleted while its objects remained, history is lost; installed anew", map[string]string{"release": "alpha"})
	after, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "alpha", metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Errorf("alpha's ConfigMap after the reinstall: %v; want the same object (uid %s), adopted back", err, before.UID)
	}
}

// installForeign installs release name with plain Helm, as another tool,
// or an addon-operator that did not label its releases, would: its chart
// renders ConfigMap name with message "foreign".
func (h *harness) installForeign(name string) {
	h.T.Helper()
	h.installUnlabeled(name, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\ndata:\n  message: foreign\n")
}

// installUnlabeled installs release name with one template, manifest, as
// plain Helm or an earlier operator does: without the ownership label.
func (h *harness) installUnlabeled(name, manifest string) {
	h.T.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &cp.Kubeconfig, &h.Namespace
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, h.Namespace, "secret", h.T.Logf); err != nil {
		h.T.Fatalf("init helm: %v", err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = name, h.Namespace
	foreign := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(manifest)}},
	}
	if _, err := install.RunWithContext(h.T.Context(), foreign, nil); err != nil {
		h.T.Fatalf("install foreign release %s: %v", name, err)
	}
}

func TestForeignReleaseIsRefusedUntilMigrationSwitch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installForeign("alpha")
	h.start()
	refused := `release "alpha" in namespace "` + h.Namespace + `" (revision 1, deployed) was not created by addon-operator`
	h.WaitModule("alpha", "last error refuses the release and names the switch", operatortest.ErrorContains(refused, "--adopt-unlabeled-releases"))
	h.waitEvent("ModuleRunFailed", refused)
	if got := h.alphaData()["message"]; got != "foreign" {
		t.Errorf("foreign ConfigMap message = %q, want it untouched", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("foreign release revision = %d, want 1", got)
	}
	// Disabled, the module leaves the foreign release alone.
	h.SetConfig(map[string]string{"alphaEnabled": "false"})
	h.WaitModule("alpha", "disabled", func(m status.ModuleStatus) bool { return !m.Enabled && m.Phase == status.PhaseDisabled })
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("foreign release revision after disabling alpha = %d, want 1, not uninstalled", got)
	}
	h.Stop()

	// Enabled again explicitly: an emptied ConfigMap without confirmation
	// would hold the saved configuration, which disables alpha.
	h.SetConfig(map[string]string{"alphaEnabled": "true"})
	h.start("--adopt-unlabeled-releases")
	h.Poll("alpha's release to be upgraded and labelled ours", func() bool {
		return h.ReleaseRevision("alpha") == 2 && h.alphaData()["message"] == "from-values-yaml" && h.releaseOwned("alpha", 2)
	})
}

// releaseOwned reports whether Helm's record of the release's revision
// carries the operator's ownership label.
func (h *harness) releaseOwned(name string, revision int) bool {
	h.T.Helper()
	selector := fmt.Sprintf("owner=helm,name=%s,version=%d,addon-operator.io/managed-by=addon-operator", name, revision)
	list, err := h.Client.CoreV1().Secrets(h.Namespace).List(h.T.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		h.T.Fatalf("list release secrets: %v", err)
	}
	return len(list.Items) == 1
}

func TestForeignReleaseOfNoModuleIsListedUntilMigrationSwitchPurgesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installForeign("gone")
	op := h.start()
	op.WaitReady()
	op.WaitCondition(status.ConditionForeignReleases, "gone")
	h.WaitLog(1, "release not created by addon-operator, not touched", map[string]string{"release": "gone"})
	if _, page, err := operatortest.HTTPGet(t, op.URL()+"/"); err != nil || !strings.Contains(page, `<code class="release">gone</code>`) {
		t.Errorf("status page does not list release gone (err %v)", err)
	}
	if got := h.ReleaseRevision("gone"); got != 1 {
		t.Errorf("foreign release revision = %d, want 1, untouched", got)
	}
	if got := h.configMap("gone")["message"]; got != "foreign" {
		t.Errorf("foreign release's ConfigMap message = %q, want it untouched", got)
	}
	h.Stop()

	h.start("--adopt-unlabeled-releases")
	h.WaitLog(1, "release without ownership label adopted", map[string]string{"release": "gone"})
	h.Poll("release gone and its ConfigMap to be purged", func() bool {
		_, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "gone", metav1.GetOptions{})
		return h.ReleaseRevision("gone") == 0 && apierrors.IsNotFound(err)
	})
}
