package deckhouse

import (
	"slices"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// kubernetesCELSchema has a transition rule below a map list and a rule
// using Kubernetes' quantity library, both with a messageExpression.
const kubernetesCELSchema = `type: object
properties:
  pools:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items:
      type: object
      properties:
        name: {type: string}
        size: {type: integer}
      x-kubernetes-validations:
      - rule: self.size >= oldSelf.size
        message: a pool cannot shrink
        messageExpression: "'pool ' + self.name + ' cannot shrink from ' + string(oldSelf.size) + ' to ' + string(self.size)"
  memory:
    type: string
    default: 1Gi
    x-kubernetes-validations:
    - rule: quantity(self).isLessThan(quantity('2Gi'))
      message: memory is not under 2Gi
      messageExpression: "'memory ' + self + ' is not under 2Gi'"
`

// TestKubernetesCELAtAdmission: a settings change that shrinks an item of
// a map list (found by its key, wherever it moved) and one that breaks a
// rule using Kubernetes' quantity library are refused at admission with
// their messageExpressions' messages, and the last good settings stay in
// force; a change that reorders and grows the list is admitted.
func TestKubernetesCELAtAdmission(t *testing.T) {
	t.Parallel()
	files := map[string]string{"010-dh-kcel/openapi/config-values.yaml": kubernetesCELSchema}
	chart(files, "010-dh-kcel", "dh-kcel", "dhKcel")
	h := newHarness(t, files)
	h.SetConfig(map[string]string{"dhKcelEnabled": "true", "dhKcel": "pools: [{name: a, size: 3}, {name: b, size: 1}]\n"})
	op := h.start(h.webhookArgs()...)
	op.WaitReady()
	h.Poll("the ConfigMap check in the webhook configuration", func() bool {
		cfg, err := h.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), h.Namespace, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(cfg.Webhooks, func(w admissionregv1.ValidatingWebhook) bool { return w.Name == "configmap.addon-operator.io" })
	})
	good := `{"memory":"1Gi","pools":[{"name":"a","size":3},{"name":"b","size":1}]}`
	h.Poll("the good settings deployed", func() bool { return h.ConfigMapData("dh-kcel")["settings"] == good })

	shrink := map[string]string{"dhKcelEnabled": "true", "dhKcel": "pools: [{name: b, size: 1}, {name: a, size: 2}]\n"}
	// The API server may take a moment to call a new webhook server.
	h.Poll("the shrinking pool denied by the webhook", func() bool {
		err := h.update(shrink)
		if err == nil {
			t.Fatal("a shrinking pool was admitted")
		}
		return strings.Contains(err.Error(), "configmap.addon-operator.io")
	})
	for _, tc := range []struct{ data, want string }{
		{shrink["dhKcel"], "dhKcel.pools[1] is invalid: pool a cannot shrink from 3 to 2"},
		{"pools: [{name: a, size: 3}, {name: b, size: 1}]\nmemory: 3Gi\n", "dhKcel.memory is invalid: memory 3Gi is not under 2Gi"},
	} {
		err := h.update(map[string]string{"dhKcelEnabled": "true", "dhKcel": tc.data})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ConfigMap with %q: %v, want a denial naming %q", tc.data, err, tc.want)
		}
	}
	if got := h.ConfigMapData("dh-kcel")["settings"]; got != good {
		t.Errorf("settings in force = %s, want the last good %s", got, good)
	}

	// Reordered, one pool grown, one added: admitted and deployed.
	if err := h.update(map[string]string{"dhKcelEnabled": "true", "dhKcel": "pools: [{name: c, size: 1}, {name: b, size: 2}, {name: a, size: 3}]\nmemory: 1500Mi\n"}); err != nil {
		t.Fatalf("a growing, reordered list was refused: %v", err)
	}
	grown := `{"memory":"1500Mi","pools":[{"name":"c","size":1},{"name":"b","size":2},{"name":"a","size":3}]}`
	h.Poll("the grown settings deployed", func() bool { return h.ConfigMapData("dh-kcel")["settings"] == grown })
	// The next refusal compares with the settings now in force.
	err := h.update(map[string]string{"dhKcelEnabled": "true", "dhKcel": "pools: [{name: c, size: 1}, {name: b, size: 1}, {name: a, size: 3}]\nmemory: 1500Mi\n"})
	if err == nil || !strings.Contains(err.Error(), "dhKcel.pools[1] is invalid: pool b cannot shrink from 2 to 1") {
		t.Errorf("shrinking b after it grew: %v, want a denial", err)
	}
}

// sensitiveCELSchema has a rule whose messageExpression would quote a
// value marked sensitive.
const sensitiveCELSchema = `type: object
properties:
  password:
    type: string
    x-sensitive: true
x-kubernetes-validations:
- rule: "!has(self.password) || self.password.size() >= 16"
  message: the password is too short
  messageExpression: "'the password ' + self.password + ' is too short'"
`

// TestCELMessageDoesNotQuoteSensitiveValues: a user who may only update
// the operator's ConfigMap writes a password that breaks a rule whose
// messageExpression would quote it. Without a webhook the operator
// refuses it at load; the refusal, which readers of /readyz and of Events
// see, carries the rule's static message, never the password.
func TestCELMessageDoesNotQuoteSensitiveValues(t *testing.T) {
	t.Parallel()
	files := map[string]string{"010-dh-secret/openapi/config-values.yaml": sensitiveCELSchema}
	chart(files, "010-dh-secret", "dh-secret", "dhSecret")
	h := newHarness(t, files)
	h.SetConfig(map[string]string{"dhSecretEnabled": "true", "dhSecret": "password: a-long-enough-password\n"})
	op := h.start()
	op.WaitReady()

	writer := h.configMapWriter("cel-writer")
	const secret = "hunter2-leak"
	cms := writer.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"dhSecretEnabled": "true", "dhSecret": "password: " + secret + "\n"}
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update as the writer: %v", err)
	}
	op.WaitCondition(status.ConditionConfigMapInvalid, "dhSecret is invalid: the password is too short")
	_, body, err := operatortest.HTTPGet(t, op.URL()+"/readyz")
	if err != nil || strings.Contains(body, secret) {
		t.Errorf("/readyz (%v) quotes the password: %s", err, body)
	}
	events, err := h.Client.CoreV1().Events(h.Namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range events.Items {
		if strings.Contains(events.Items[i].Message, secret) {
			t.Errorf("Event %s quotes the password: %s", events.Items[i].Name, events.Items[i].Message)
		}
	}
}

// configMapWriter makes a user who may get and update the operator's
// ConfigMap and nothing else, and returns a client acting as that user.
func (h *harness) configMapWriter(user string) kubernetes.Interface {
	t := h.T
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"addon-operator"}, Verbs: []string{"get", "update"},
	}}}
	if _, err := h.Client.RbacV1().Roles(h.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := h.Client.RbacV1().RoleBindings(h.Namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Poll(user+" may read the ConfigMap", func() bool {
		_, err := kube.CoreV1().ConfigMaps(h.Namespace).Get(ctx, "addon-operator", metav1.GetOptions{})
		return err == nil
	})
	return kube
}
