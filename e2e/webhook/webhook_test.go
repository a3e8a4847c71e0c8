package webhook

import (
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func thing(group, version, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/" + version, "kind": "Thing",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// webhookNames lists the entries of the test's ValidatingWebhookConfiguration.
func (h *harness) webhookNames() []string {
	cfg, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(h.T.Context(), h.Namespace, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(cfg.Webhooks))
	for i := range cfg.Webhooks {
		names = append(names, cfg.Webhooks[i].Name)
	}
	return names
}

func TestAdmissionConversionAndRemoval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{})
	h.start()
	h.WaitReady()
	ctx := t.Context()

	// The release came after the entries: a denied CR is denied at once
	// after the module is ready, with the hook's message.
	h.Poll("a Thing above 10 denied with the hook's message", func() bool {
		_, err := h.things("v1alpha1").Create(ctx, thing(h.group, "v1alpha1", "big", map[string]any{"count": int64(20)}), metav1.CreateOptions{})
		if err == nil {
			_ = h.things("v1alpha1").Delete(ctx, "big", metav1.DeleteOptions{})
			return false
		}
		return strings.Contains(err.Error(), `admission webhook "size.`+h.group+`" denied the request: count 20 is above 10`)
	})

	// Mutating: the patch is in the stored object.
	created, err := h.things("v1alpha1").Create(ctx, thing(h.group, "v1alpha1", "small", map[string]any{"count": int64(3)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a Thing within bounds: %v", err)
	}
	if got := created.GetLabels()["mutated"]; got != "yes" {
		t.Errorf("stored labels %v, want mutated=yes from the mutating hook", created.GetLabels())
	}

	// Stored at v1alpha1, read at v1 through two hooks: count -> size -> replicas.
	v1, err := h.things("v1").Get(ctx, "small", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read the Thing at v1: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(v1.Object, "spec", "replicas"); got != 3 || v1.GetAPIVersion() != h.group+"/v1" {
		t.Errorf("read at v1: apiVersion %s spec %v, want %s/v1 with replicas 3", v1.GetAPIVersion(), v1.Object["spec"], h.group)
	}
	// And back: written at v1, stored (converted) at v1alpha1.
	if _, err := h.things("v1").Create(ctx, thing(h.group, "v1", "from-v1", map[string]any{"replicas": int64(5)}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create at v1: %v", err)
	}
	alpha, err := h.things("v1alpha1").Get(ctx, "from-v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(alpha.Object, "spec", "count"); got != 5 {
		t.Errorf("read at v1alpha1: spec %v, want count 5", alpha.Object["spec"])
	}

	h.checkHangingHook(t)
	h.checkCRDsReapplied(t)
	h.checkDisableRemoves(t)
}

// checkHangingHook: a hook that hangs meets its timeout, then the
// webhook's failure policy.
func (h *harness) checkHangingHook(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	hang := func(name, policy string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"hang": policy}}}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err := hang("hang-ignore", "ignore"); err != nil {
		t.Errorf("create with a hanging Ignore webhook: %v, want it stored", err)
	}
	if err := hang("hang-fail", "fail"); err == nil || !strings.Contains(err.Error(), "fail.hang."+h.group) {
		t.Errorf("create with a hanging Fail webhook: %v, want an error naming the webhook", err)
	}
	if _, err := cms.Get(ctx, "hang-fail", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap under a failing webhook stored: %v", err)
	}
}

// checkCRDsReapplied: a module run re-applies its crds/ (server-side
// apply, its own field manager) and the conversion stays in place.
func (h *harness) checkCRDsReapplied(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	runs := h.CountLog("module run done", map[string]string{"module": "things"})
	h.SetConfig(map[string]string{"things": "rerun: 1"})
	h.WaitLog(runs+1, "module run done", map[string]string{"module": "things"})
	crd, err := h.dyn.Resource(crds).Get(ctx, "things."+h.group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); strategy != "Webhook" {
		t.Errorf("CRD conversion strategy %q after the module's CRDs were applied again, want Webhook", strategy)
	}
	if _, err := h.things("v1").Get(ctx, "small", metav1.GetOptions{}); err != nil {
		t.Errorf("read at v1 after the CRDs were applied again: %v", err)
	}
}

// checkDisableRemoves: disabling the module removes its entries and
// conversion before its release goes.
func (h *harness) checkDisableRemoves(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	h.SetConfig(map[string]string{"thingsEnabled": "false"})
	h.WaitModule("things", "disabled", func(m status.ModuleStatus) bool { return !m.Enabled && m.Revision == 0 })
	names := h.webhookNames()
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, h.group) }) {
		t.Errorf("webhook entries %v after the module was disabled, want none of it", names)
	}
	crd, err := h.dyn.Resource(crds).Get(ctx, "things."+h.group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); strategy != "None" {
		t.Errorf("CRD conversion strategy %q after disable, want None", strategy)
	}
	mwc, err := h.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, h.Namespace, metav1.GetOptions{})
	if err != nil || len(mwc.Webhooks) != 0 {
		t.Errorf("mutating entries after disable: %v (err %v), want none", mwc, err)
	}
	h.WaitLog(1, "webhooks removed", map[string]string{"module": "things"})
}

func TestConfigMapCheckedAtAdmission(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"thingsEnabled": "false", "echo": "replicas: 2"})
	op := h.start()
	h.WaitReady()
	ctx := t.Context()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	write := func(data map[string]string, opts metav1.UpdateOptions) error {
		cm, err := cms.Get(ctx, "addon-operator", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = data
		_, err = cms.Update(ctx, cm, opts)
		return err
	}
	update := func(data map[string]string) error { return write(data, metav1.UpdateOptions{}) }
	invalid := map[string]string{"thingsEnabled": "false", "echo": "replicas: two"}
	// Dry runs until the check is in force: a write that got through
	// before would be stored.
	h.Poll("the ConfigMap check in force", func() bool {
		return write(invalid, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}) != nil
	})
	if err := update(invalid); err == nil || !strings.Contains(err.Error(), "echo.replicas") || !strings.Contains(err.Error(), "integer") {
		t.Errorf("schema error: %v, want a rejection naming echo.replicas and the type", err)
	}
	if err := update(map[string]string{"thingsEnabled": "false", "echo": "replicas: [2"}); err == nil || !strings.Contains(err.Error(), `"echo"`) {
		t.Errorf("invalid YAML: %v, want a rejection naming the key", err)
	}
	if got := h.ConfigMapData("addon-operator")["echo"]; got != "replicas: 2" {
		t.Errorf("stored echo section %q, want the last good one: nothing invalid stored", got)
	}
	if n := h.CountLog("ConfigMap is invalid, keeping the last valid one", nil); n != 0 {
		t.Errorf("the operator saw %d rejected contents, want none: they never reached it", n)
	}
	// An unknown module key is stored, with a warning.
	if err := update(map[string]string{"thingsEnabled": "false", "echo": "replicas: 2", "ecoh": "x: 1"}); err != nil {
		t.Errorf("unknown module key: %v, want it stored with a warning", err)
	}

	// With the operator gone and policy Ignore, writes go through.
	op.Kill()
	if err := update(map[string]string{"thingsEnabled": "false", "echo": "replicas: three"}); err != nil {
		t.Errorf("write with the operator SIGKILLed: %v, want it stored (failure policy Ignore)", err)
	}
}

func TestCertificateRenewedWithoutRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"thingsEnabled": "false"})
	// Valid for 40 s (client-go dates certificates an hour back), renewed
	// 20 s before expiry.
	op := h.start("--webhook-cert-validity=1h0m40s", "--webhook-cert-renew-before=20s")
	h.WaitReady()
	var first string
	h.Poll("a certificate served", func() bool {
		var err error
		first, err = h.servedSerial()
		return err == nil
	})
	h.Poll("a renewed certificate served", func() bool {
		serial, err := h.servedSerial()
		return err == nil && serial != first
	})
	select {
	case <-op.Exited():
		t.Fatal("the operator exited")
	default:
	}
	// The API server trusts the renewed certificate: the ConfigMap check
	// still answers through it.
	cfg, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), h.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(cfg.Webhooks, func(w admissionregv1.ValidatingWebhook) bool { return w.Name == "configmap.addon-operator.io" }); i < 0 {
		t.Fatalf("no ConfigMap webhook in %s", h.Namespace)
	}
	h.Poll("a ConfigMap rejected through the renewed certificate", func() bool {
		cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
		cm, err := cms.Get(t.Context(), "addon-operator", metav1.GetOptions{})
		if err != nil {
			return false
		}
		cm.Data = map[string]string{"thingsEnabled": "maybe"}
		_, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{})
		return err != nil && strings.Contains(err.Error(), "thingsEnabled")
	})
}
