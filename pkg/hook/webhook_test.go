package hook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

func TestParseConfigErrorsWebhooks(t *testing.T) {
	checkConfigErrors(t, []configErrorCase{
		{
			name:  "unknown webhook binding kind",
			input: "configVersion: v1\nkubernetesValidation:\n- name: a.b.c",
			want:  []string{`unknown field "kubernetesValidation"`},
		},
		{
			name: "validating: bad name, missing rules, unknown key",
			input: `configVersion: v1
kubernetesValidating:
- name: short
  failurePolicy: Sometimes
  sideEffects: Some
  timeoutSeconds: 60
  objectSelector: {}`,
			want: []string{
				`kubernetesValidating[0].name: "short" is not a DNS name of at least three parts (like "check.example.com")`,
				`kubernetesValidating[0].timeoutSeconds: 60 out of range (want 1 to 30)`,
				`kubernetesValidating[0].failurePolicy: unknown policy "Sometimes" (want Fail or Ignore)`,
				`kubernetesValidating[0].sideEffects: unknown value "Some" (want None or NoneOnDryRun)`,
				`kubernetesValidating[0].rules: required (at least one rule)`,
				`kubernetesValidating[0]: unknown field "objectSelector"`,
			},
		},
		{
			name: "mutating: incomplete rule and duplicate name",
			input: `configVersion: v1
kubernetesMutating:
- name: a.example.com
  rules: [{apiGroups: [""], resources: [pods], scope: Everywhere}]
- name: a.example.com
  rules: [{apiGroups: [""], apiVersions: [v1], resources: [pods], operations: [CREATE]}]`,
			want: []string{
				`kubernetesMutating[0].rules[0].scope: unknown scope "Everywhere" (want *, Cluster or Namespaced)`,
				`kubernetesMutating[0].rules[0].apiVersions: required`,
				`kubernetesMutating[0].rules[0].operations: required`,
				`kubernetesMutating[1].name: duplicate webhook name "a.example.com"`,
			},
		},
		{
			name: "conversion: missing crd and versions, unknown snapshot",
			input: `configVersion: v1
kubernetesCustomResourceConversion:
- name: conv
  includeSnapshotsFrom: [nope]
  conversions: [{fromVersion: v1}, {fromVersion: v2, toVersion: v2}]`,
			want: []string{
				`kubernetesCustomResourceConversion[0].crdName: required`,
				`kubernetesCustomResourceConversion[0].conversions[0]: fromVersion and toVersion are required`,
				`kubernetesCustomResourceConversion[0].conversions[1]: fromVersion and toVersion are both "v2"`,
				`kubernetesCustomResourceConversion[0].includeSnapshotsFrom[0]: unknown kubernetes binding "nope" (the hook has no kubernetes bindings)`,
			},
		},
	})
}

func TestParseConfigWebhookDefaults(t *testing.T) {
	const src = `configVersion: v1
kubernetesValidating:
- name: check.example.com
  rules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}]
kubernetesCustomResourceConversion:
- crdName: things.example.com
  conversions: [{fromVersion: v1alpha1, toVersion: v1}]
`
	cfg, err := ParseConfig("x", []byte(src), Module)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Validating[0]
	want := AdmissionBinding{
		Name:           "check.example.com",
		Rules:          []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{"CREATE"}, Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		SideEffects:    admissionv1.SideEffectClassNone,
		TimeoutSeconds: 10,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("validating binding (-want +got):\n%s", diff)
	}
	if name := cfg.Conversions[0].Name; name != "kubernetesCustomResourceConversion" {
		t.Errorf("conversion binding name %q, want the binding type", name)
	}
	if !cfg.HasWebhooks() {
		t.Error("HasWebhooks false")
	}
}
