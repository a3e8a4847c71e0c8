package deckhouse

import (
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// fullDefinition is a module.yaml with every field of Deckhouse's, and
// one that no one knows.
const fullDefinition = `name: dh-full
weight: 10
critical: true
namespace: __NS__
stage: General Availability
subsystems: [network]
tags: [cni, networking]
descriptions:
  en: Pod networking for the tests.
  ru: Сеть подов для тестов.
exclusiveGroup: dh-cni
requirements:
  kubernetes: ">= 1.20"
  deckhouse: ">= 1.61"
  bootstrapped: true
  modules:
    dh-base: ">= 1.0"
disable:
  confirmation: true
  messages:
    en: Pods lose their network.
accessibility:
  editions:
    _default: {available: true}
update:
  versions: [{from: "1.1", to: "1.2"}]
colour: blue
`

// TestDeckhouseModuleYAML runs modules written for Deckhouse: one whose
// module.yaml has every field runs and shows them, one with a broken
// module.yaml fails alone and names the file and the key, a second module
// of an exclusiveGroup stays disabled, and one that needs a newer
// Kubernetes is not run.
func TestDeckhouseModuleYAML(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"010-dh-full/module.yaml":   fullDefinition,
		"020-dh-broken/module.yaml": "weight: 20\ntags: network\n",
		"030-dh-alt/module.yaml":    "exclusiveGroup: dh-cni\n",
		"040-dh-future/module.yaml": "requirements:\n  kubernetes: \">= 99.0\"\n",
	}
	chart(files, "005-dh-base", "dh-base", "dhBase")
	chart(files, "010-dh-full", "dh-full", "dhFull")
	chart(files, "020-dh-broken", "dh-broken", "dhBroken")
	chart(files, "030-dh-alt", "dh-alt", "dhAlt")
	chart(files, "040-dh-future", "dh-future", "dhFuture")
	h := newHarness(t, files)
	h.SetConfig(map[string]string{
		"dhBaseEnabled": "true", "dhFullEnabled": "true", "dhBrokenEnabled": "true", "dhAltEnabled": "true", "dhFutureEnabled": "true",
	})
	op := h.start()
	op.WaitReady()

	full := op.WaitModule("dh-full", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	if !full.Critical || full.Stage != "General Availability" || full.ExclusiveGroup != "dh-cni" ||
		full.Description != "Pod networking for the tests." || !slices.Equal(full.Tags, []string{"cni", "networking"}) ||
		!slices.Equal(full.Subsystems, []string{"network"}) || !slices.Equal(full.Requires, []string{"dh-base"}) {
		t.Errorf("dh-full status = %+v, want module.yaml's fields", full)
	}
	if !slices.Contains(full.Warnings, `module.yaml: unknown field "colour" ignored`) ||
		!slices.Contains(full.Warnings, "module.yaml: requirements.deckhouse ignored: there is no Deckhouse version to check") {
		t.Errorf("dh-full warnings = %q, want the unknown field and Deckhouse's own", full.Warnings)
	}
	if n := h.CountLog("module definition", map[string]string{"module": "dh-full", "reason": `unknown field "colour"`}); n != 1 {
		t.Errorf("warnings about the unknown field logged %d times, want once", n)
	}
	if got := h.ConfigMapData("dh-full"); got == nil {
		t.Error("dh-full's chart was not deployed")
	}

	broken, _ := op.Module("dh-broken")
	if broken.Phase != status.PhaseFailed || !strings.Contains(broken.LastError, "/020-dh-broken/module.yaml: field tags: want []string, got string") {
		t.Errorf("dh-broken = %s %q, want Failed naming module.yaml and tags", broken.Phase, broken.LastError)
	}
	alt, _ := op.Module("dh-alt")
	if alt.Enabled || alt.By != status.SourceExclusiveGroup || !strings.Contains(alt.Reason, `exclusiveGroup "dh-cni": module dh-full is enabled`) {
		t.Errorf("dh-alt = enabled %v by %s (%q), want disabled by its exclusiveGroup", alt.Enabled, alt.By, alt.Reason)
	}
	future, _ := op.Module("dh-future")
	if future.Phase != status.PhaseFailed || !strings.Contains(future.LastError, `requirements.kubernetes ">= 99.0": the cluster runs Kubernetes v`) {
		t.Errorf("dh-future = %s %q, want Failed with the Kubernetes requirement", future.Phase, future.LastError)
	}
	for _, name := range []string{"dh-broken", "dh-alt", "dh-future"} {
		if h.ReleaseRevision(name) != 0 {
			t.Errorf("%s was deployed", name)
		}
	}
}

// celSchema is a settings schema with Deckhouse's and Kubernetes' CEL
// rules, one of them a transition rule.
const celSchema = `type: object
properties:
  replicas:
    type: integer
    default: 1
    x-kubernetes-validations:
    - rule: self <= 5
      message: at most 5 replicas
  mode:
    type: string
    default: Single
x-deckhouse-validations:
- expression: "!(self.mode == 'HA' && self.replicas < 2)"
  message: HA mode needs at least two replicas
- expression: oldSelf.mode == self.mode
  message: mode cannot be changed
`

// TestDeckhouseCELRejectsForbiddenSettings: the CEL rules of a settings
// schema refuse a forbidden setting at admission, with the module's key
// path and the rule's message; past admission, the operator refuses it
// when it loads the ConfigMap and keeps the last good settings in force.
// Admission also refuses a second module of an exclusiveGroup.
func TestDeckhouseCELRejectsForbiddenSettings(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"010-dh-cel/module.yaml":                "exclusiveGroup: dh-ingress\n",
		"010-dh-cel/openapi/config-values.yaml": celSchema,
		"020-dh-cel-alt/module.yaml":            "exclusiveGroup: dh-ingress\n",
	}
	chart(files, "010-dh-cel", "dh-cel", "dhCel")
	chart(files, "020-dh-cel-alt", "dh-cel-alt", "dhCelAlt")
	h := newHarness(t, files)
	good := map[string]string{"dhCelEnabled": "true", "dhCel": "replicas: 2\nmode: HA\n"}
	h.SetConfig(good)
	op := h.start(h.webhookArgs()...)
	op.WaitReady()
	h.Poll("the ConfigMap check in the webhook configuration", func() bool {
		cfg, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), h.Namespace, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(cfg.Webhooks, func(w admissionregv1.ValidatingWebhook) bool { return w.Name == "configmap.addon-operator.io" })
	})
	want := `{"mode":"HA","replicas":2}`
	h.Poll("the good settings deployed", func() bool { return h.ConfigMapData("dh-cel")["settings"] == want })

	// The API server may take a moment to call a new webhook server.
	h.Poll("the first forbidden setting denied by the webhook", func() bool {
		err := h.update(map[string]string{"dhCelEnabled": "true", "dhCel": "replicas: 1\nmode: HA\n"})
		if err == nil {
			t.Fatal("a forbidden setting was admitted")
		}
		return strings.Contains(err.Error(), "configmap.addon-operator.io")
	})
	for _, tc := range []struct{ data, want string }{
		{"replicas: 1\nmode: HA\n", "dhCel is invalid: HA mode needs at least two replicas"},
		{"replicas: 7\nmode: HA\n", "dhCel.replicas is invalid: at most 5 replicas"},
		{"replicas: 2\nmode: Single\n", "dhCel is invalid: mode cannot be changed"},
	} {
		err := h.update(map[string]string{"dhCelEnabled": "true", "dhCel": tc.data})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "configmap.addon-operator.io") {
			t.Errorf("ConfigMap with %q: %v, want a denial naming %q", tc.data, err, tc.want)
		}
	}
	err := h.update(map[string]string{"dhCelEnabled": "true", "dhCelAltEnabled": "true", "dhCel": good["dhCel"]})
	if err == nil || !strings.Contains(err.Error(), `exclusiveGroup "dh-ingress": modules dh-cel, dh-cel-alt would be enabled together`) {
		t.Errorf("enabling a second module of the group: %v, want a denial", err)
	}

	// Past admission (a run without the webhook server), the operator
	// refuses the forbidden setting when it loads it.
	op.Stop()
	h.deleteWebhooks()
	op = h.start()
	op.WaitReady()
	h.SetConfig(map[string]string{"dhCelEnabled": "true", "dhCel": "replicas: 1\nmode: HA\n"})
	op.WaitCondition(status.ConditionConfigMapInvalid, "dhCel is invalid: HA mode needs at least two replicas")
	h.SetConfig(map[string]string{"dhCelEnabled": "true", "dhCel": "replicas: 3\nmode: Single\n"})
	op.WaitCondition(status.ConditionConfigMapInvalid, "dhCel is invalid: mode cannot be changed")
	if got := h.ConfigMapData("dh-cel")["settings"]; got != want {
		t.Errorf("settings in force = %s, want the last good %s", got, want)
	}
	if got := h.ReleaseRevision("dh-cel"); got != 1 {
		t.Errorf("dh-cel release revision = %d, want 1: nothing forbidden was deployed", got)
	}
}
