package operator

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// A failed upgrade is rolled back to the last deployed revision, with the
// chart's rollback hook, and the new revision keeps being retried until it
// deploys.
func TestFailedUpgradeRolledBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"remedyEnabled": "true"})
	h.start("--remediation=rollback", "--remediation-retries=2")
	h.WaitReady()
	if got := h.ReleaseRevision("remedy"); got != 1 {
		t.Fatalf("remedy revision = %d, want 1", got)
	}

	h.setConfigKey("remedy", "broken: true")
	h.WaitModule("remedy", "to be rolled back", func(m status.ModuleStatus) bool {
		return strings.Contains(m.Remediation, "to revision 1 after 2 failed deployments")
	})
	h.Poll("the rollback hook's ConfigMap", func() bool { return h.ConfigMapData("remedy-rolled-back") != nil })
	h.WaitMetric("addon_operator_remediations_total", map[string]string{"module": "remedy", "action": "rollback", "outcome": "success"},
		"to count the rollback", operatortest.AtLeast(1))
	events, err := h.Client.CoreV1().Events(h.Namespace).List(t.Context(), metav1.ListOptions{FieldSelector: "reason=ReleaseRemediated"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 || !strings.Contains(events.Items[0].Message, "module remedy: rolled back") {
		t.Errorf("ReleaseRemediated events = %+v, want one naming the rollback", events.Items)
	}
	if got := h.ConfigMapData("remedy")["broken"]; got != "false" {
		t.Errorf("remedy's ConfigMap says broken %q after the rollback, want the deployed revision's false", got)
	}

	h.setConfigKey("remedy", "broken: false\n# fixed\n")
	h.WaitModule("remedy", "to deploy again", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseReady && m.Remediation == ""
	})
}
