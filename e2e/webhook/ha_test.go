package webhook

import (
	"context"
	"net"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// TestStandbyServesWebhooks points the API server at a standby replica:
// the leader writes the configurations, the standby answers.
func TestStandbyServesWebhooks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{})
	_, leaderPort, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	ha := []string{"--ha", "--ha-lease-name=webhooks"}
	leader := h.startOn(leaderPort, append(ha, "--ha-identity=leader")...)
	leader.WaitReady()
	h.WaitLog(1, "webhooks registered", map[string]string{"module": "things"})
	standby := h.startOn(h.port, append(ha, "--ha-identity=standby")...) // h.port: where the API server calls
	ctx, cancel := context.WithTimeout(t.Context(), operatortest.Timeout)
	defer cancel()
	if _, err := standby.Log().Wait(ctx, 0, func(l operatortest.Line) bool { return l.Msg == "webhook server serving" }); err != nil {
		t.Fatalf("standby's webhook server: %v", err)
	}
	h.Poll("a Thing above 10 denied through the standby", func() bool {
		_, err := h.things("v1alpha1").Create(t.Context(), thing(h.group, "v1alpha1", "big", map[string]any{"count": int64(20)}),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "count 20 is above 10")
	})
	runs := standby.Metric("addon_operator_hook_runs_total", map[string]string{"binding": "size." + h.group})
	if runs < 1 {
		t.Errorf("standby ran the validating hook %v times, want at least once", runs)
	}
	if leader.Metric("addon_operator_hook_runs_total", map[string]string{"binding": "size." + h.group}) != 0 {
		t.Error("the leader ran the hook: the request did not go to the standby")
	}
}
