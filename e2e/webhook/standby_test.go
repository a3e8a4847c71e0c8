package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// uniqueHook denies a Gadget whose name a labelled ConfigMap of the test's
// namespace has taken (its snapshot) or that is longer than the
// ConfigMap's unique.maxLength (a configured value).
const uniqueHook = `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == --config ]]; then
  cat <<YAML
configVersion: v1
kubernetes:
- name: taken
  kind: ConfigMap
  namespace: {nameSelector: {matchNames: [__NS__]}}
  labelSelector: {matchLabels: {unique-e2e: "yes"}}
  jqFilter: .data.name
  executeHookOnEvent: []
  executeHookOnSynchronization: false
kubernetesValidating:
- name: unique.__GROUP__
  includeSnapshotsFrom: [taken]
  rules:
  - {apiGroups: [__GROUP__], apiVersions: ["*"], resources: [gadgets], operations: [CREATE]}
YAML
  exit 0
fi
name=$(jq -r '.[0].review.request.object.metadata.name' "$BINDING_CONTEXT_PATH")
max=$(jq -r '.unique.maxLength // 100' "$CONFIG_VALUES_PATH")
if jq -e --arg n "$name" '.[0].snapshots.taken | map(.filterResult) | index($n)' "$BINDING_CONTEXT_PATH" >/dev/null; then
  jq -n --arg n "$name" '{allowed: false, message: ("name " + $n + " is taken")}' > "$VALIDATING_RESPONSE_PATH"
elif (( ${#name} > max )); then
  jq -n --arg n "$name" --argjson m "$max" '{allowed: false, message: ("name " + $n + " is longer than \($m)")}' > "$VALIDATING_RESPONSE_PATH"
else
  echo '{"allowed": true}' > "$VALIDATING_RESPONSE_PATH"
fi
`

// TestStandbyAnswersLikeTheLeader sends one admission request to the
// leader and to a standby, directly to each replica's webhook server: a
// hook whose answer depends on a kubernetes binding's snapshot and on a
// configured value answers alike on both, and both follow a new object and
// a ConfigMap change.
func TestStandbyAnswersLikeTheLeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hookPath := filepath.Join(h.dir, "modules", "030-unique", "hooks", "unique")
	if err := os.MkdirAll(filepath.Dir(hookPath), 0o750); err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("__GROUP__", h.group, "__NS__", h.Namespace).Replace(uniqueHook)
	if err := os.WriteFile(hookPath, []byte(text), 0o755); err != nil { //nolint:gosec // G306: a hook must be executable
		t.Fatal(err)
	}
	h.takeName("taken-alpha", "alpha")
	h.SetConfig(map[string]string{"uniqueEnabled": "true", "unique": "maxLength: 8\n"})

	_, leaderPort, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	ha := []string{"--ha", "--ha-lease-name=unique"}
	leader := h.startOn(leaderPort, append(ha, "--ha-identity=leader")...)
	leader.WaitReady()
	standby := h.startOn(h.port, append(ha, "--ha-identity=standby")...)
	replicas := map[string]string{"leader": leaderPort, "standby": h.port}

	// want polls until both replicas answer name as expected.
	want := func(name string, allowed bool, message string) {
		t.Helper()
		for who, port := range replicas {
			h.Poll(fmt.Sprintf("%s answers %q with allowed=%v %q", who, name, allowed, message), func() bool {
				resp, err := h.review(port, name)
				if err != nil {
					return false
				}
				got := ""
				if resp.Result != nil {
					got = resp.Result.Message
				}
				return resp.Allowed == allowed && got == message
			})
		}
	}
	want("alpha", false, "name alpha is taken")
	want("beta", true, "")
	want("longer-name", false, "name longer-name is longer than 8")

	h.takeName("taken-beta", "beta")
	want("beta", false, "name beta is taken")

	h.SetConfig(map[string]string{"uniqueEnabled": "true", "unique": "maxLength: 20\n"})
	want("longer-name", true, "")
	want("alpha", false, "name alpha is taken")

	// The standby takes over: the binding's snapshot monitor becomes the
	// leader's monitor, without a second list, and keeps following.
	leader.Stop()
	delete(replicas, "leader")
	standby.WaitReady()
	ctx, cancel := context.WithTimeout(t.Context(), operatortest.Timeout)
	defer cancel()
	if _, err := standby.Log().Wait(ctx, 0, func(l operatortest.Line) bool { return l.Msg == "snapshot monitor adopted" }); err != nil {
		t.Errorf("the new leader did not adopt its snapshot monitor: %v", err)
	}
	h.takeName("taken-gamma", "gamma")
	want("gamma", false, "name gamma is taken")
	want("longer-name", true, "")
}

// takeName creates a labelled ConfigMap whose data.name the unique hook's
// snapshot holds.
func (h *harness) takeName(object, name string) {
	h.T.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: object, Labels: map[string]string{"unique-e2e": "yes"}},
		Data:       map[string]string{"name": name},
	}
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Create(h.T.Context(), cm, metav1.CreateOptions{}); err != nil {
		h.T.Fatalf("create ConfigMap %s: %v", object, err)
	}
}

// review sends an AdmissionReview creating the Gadget name to the webhook
// server on port, as the API server would, and returns its response.
func (h *harness) review(port, name string) (*admissionv1.AdmissionResponse, error) {
	obj, _ := json.Marshal(map[string]any{
		"apiVersion": h.group + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": h.Namespace},
	})
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("uid-" + name),
			Kind:      metav1.GroupVersionKind{Group: h.group, Version: "v1", Kind: "Gadget"},
			Resource:  metav1.GroupVersionResource{Group: h.group, Version: "v1", Resource: "gadgets"},
			Name:      name,
			Namespace: h.Namespace,
			Operation: admissionv1.Create,
			Object:    k8sruntime.RawExtension{Raw: obj},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(h.T.Context(), 20*time.Second)
	defer cancel()
	url := "https://127.0.0.1:" + port + "/validate/unique." + h.group
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback; the answer is under test, not the certificate
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if out.Response == nil {
		return nil, fmt.Errorf("review without response")
	}
	return out.Response, nil
}
