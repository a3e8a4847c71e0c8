package modulesdk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestModuleSDKSettingsCheckAtAdmission: a ConfigMap section the batch
// binary's settings check rejects is refused by the admission webhook
// with the check's message; the chart beside the 8 MiB binary deploys.
func TestModuleSDKSettingsCheckAtAdmission(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.chart("010-sdk", "sdk", "sdk")
	h.sdkBinary("010-sdk")
	h.SetConfig(map[string]string{"sdkEnabled": "true", "sdk": "replicas: 1\n"})
	op := h.start(h.webhookArgs()...)
	op.WaitReady()
	h.Poll("the chart beside the big binary deployed", func() bool { return h.ConfigMapData("sdk")["settings"] == `{"replicas":1}` })
	h.Poll("the ConfigMap check in the webhook configuration", func() bool {
		cfg, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), h.Namespace, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(cfg.Webhooks, func(w admissionregv1.ValidatingWebhook) bool { return w.Name == "configmap.addon-operator.io" })
	})
	// The API server may take a moment to call a new webhook server.
	var err error
	h.Poll("replicas: 0 denied by the webhook", func() bool {
		err = h.update(map[string]string{"sdkEnabled": "true", "sdk": "replicas: 0\n"})
		return err != nil && strings.Contains(err.Error(), "configmap.addon-operator.io")
	})
	if !strings.Contains(err.Error(), "settings check: replicas cannot be 0") {
		t.Errorf("denial %v, want the check's message", err)
	}
	if err := h.update(map[string]string{"sdkEnabled": "true", "sdk": "replicas: 3\n"}); err != nil {
		t.Fatalf("settings the check accepts: %v", err)
	}
	h.Poll("the accepted settings deployed", func() bool { return h.ConfigMapData("sdk")["settings"] == `{"replicas":3}` })
}

// TestModuleSDKFailingProbeHoldsOnlyItsModule: a readiness probe that
// fails keeps its module from Ready, saying why, while another module's
// change still deploys; once the probe passes the module is Ready.
func TestModuleSDKFailingProbeHoldsOnlyItsModule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.chart("010-sdk", "sdk", "sdk")
	binary := h.sdkBinary("010-sdk")
	h.chart("020-other", "other", "other")
	h.SetConfig(map[string]string{"sdkEnabled": "true", "otherEnabled": "true", "other": "n: 1\n"})
	op := h.start()
	op.WaitReady()
	m := op.WaitModule("sdk", "not ready by its probe", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseWaiting && strings.Contains(m.Message, "readiness probe failed")
	})
	if !strings.Contains(m.Message, "pods not ready") {
		t.Errorf("message %q, want the probe's reason", m.Message)
	}
	h.Poll("the sdk chart deployed", func() bool { return h.ConfigMapData("sdk") != nil })

	// The failing probe holds no queue another module needs.
	h.SetConfig(map[string]string{"sdkEnabled": "true", "otherEnabled": "true", "other": "n: 2\n"})
	h.Poll("the other module's change deployed", func() bool { return h.ConfigMapData("other")["settings"] == `{"n":2}` })
	if m, _ := op.Module("sdk"); m.Phase == status.PhaseReady {
		t.Errorf("sdk Ready while its probe fails: %+v", m)
	}

	if err := os.WriteFile(filepath.Join(filepath.Dir(binary), "ready"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	op.WaitModule("sdk", "Ready once its probe passes", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseReady && m.Message == ""
	})
}
