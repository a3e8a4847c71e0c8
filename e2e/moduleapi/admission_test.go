package moduleapi

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// TestModuleConfigRejectedAtAdmission runs the operator on ModuleConfig
// objects with its webhook server: the API server refuses an object whose
// settings break the module's schema, or that names no module, with the
// operator's message, and stores nothing; a valid object is stored.
func TestModuleConfigRejectedAtAdmission(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-ad-echo", "adEcho")
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	adm := h.Client.AdmissionregistrationV1()
	t.Cleanup(func() {
		// No later test's ModuleConfig may reach a stopped server.
		bg := context.WithoutCancel(t.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
	})
	op := h.start("--config-source=moduleconfig",
		"--webhook-server", "--webhook-url=https://127.0.0.1:"+port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port="+port,
		"--validating-webhook-configuration-name="+h.Namespace, "--mutating-webhook-configuration-name="+h.Namespace)
	op.WaitReady()
	h.Poll("the ModuleConfig check in the webhook configuration", func() bool {
		cfg, err := adm.ValidatingWebhookConfigurations().Get(t.Context(), h.Namespace, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(cfg.Webhooks, func(w admissionregv1.ValidatingWebhook) bool { return w.Name == "moduleconfig.addon-operator.io" })
	})

	res := h.dyn.Resource(v1.ModuleConfigsResource())
	create := func(name string, spec map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig, "metadata": map[string]any{"name": name}, "spec": spec,
		}}
		_, err := res.Create(t.Context(), u, metav1.CreateOptions{})
		if err == nil {
			t.Cleanup(func() { _ = res.Delete(context.WithoutCancel(t.Context()), name, metav1.DeleteOptions{}) })
		}
		return err
	}
	for _, tc := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"ad-echo", map[string]any{"enabled": true, "settings": map[string]any{"greeting": strings.Repeat("x", 30)}}, "greeting"},
		{"ad-echoo", map[string]any{"enabled": true}, `metadata.name: "ad-echoo": no module of this name`},
	} {
		err := create(tc.name, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "moduleconfig.addon-operator.io") {
			t.Errorf("create %s = %v, want a denial by the webhook naming %q", tc.name, err, tc.want)
		}
		if _, err := res.Get(t.Context(), tc.name, metav1.GetOptions{}); err == nil {
			t.Errorf("ModuleConfig %s was stored", tc.name)
		}
	}
	if err := create("ad-echo", map[string]any{"enabled": true, "settings": map[string]any{"greeting": "hi"}}); err != nil {
		t.Fatalf("create a valid ModuleConfig: %v", err)
	}
	h.Poll("greeting hi", func() bool { return h.greeting("ad-echo") == "hi" })
}
