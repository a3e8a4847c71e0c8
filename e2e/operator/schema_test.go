package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func (h *harness) configMap(name string) map[string]string {
	h.T.Helper()
	cm, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(h.T.Context(), name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm.Data
}

func TestSchemaDefaultsReachTheChart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"schemaEnabled": "true", "schema": "replicas: 3\nservers:\n  web: {}\n  api: {port: 9090}\n"})
	h.start()
	h.WaitReady()
	want := map[string]string{
		"replicas": "3",                  // ConfigMap
		"mode":     "safe",               // config-values schema default
		"token":    "from-values-schema", // values schema default (x-extend keeps the config properties)
		"port-web": "8080",               // default under patternProperties
		"port-api": "9090",
	}
	if diff := cmp.Diff(want, h.configMap("schema")); diff != "" {
		t.Errorf("rendered values (-want +got):\n%s", diff)
	}
}

func TestInvalidConfigSectionIsRejectedAndLastGoodKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"schemaEnabled": "true", "schema": "mode: fast\n"})
	h.start()
	h.WaitReady()

	h.SetConfig(map[string]string{"schemaEnabled": "true", "schema": "mode: turbo\nextra: 1\n"})
	h.WaitCondition(status.ConditionConfigMapInvalid, "schema.mode must be one of [fast safe]", "schema.extra")
	// The metric is counted beside the condition, not before it.
	if n := h.WaitMetric(operatortest.ConfigErrors, nil, "the rejected ConfigMap counted", operatortest.AtLeast(1)); n != 1 {
		t.Errorf("rejected ConfigMap contents = %v, want 1", n)
	}
	// Rejected by a schema, as by the parser: an Event names the key.
	h.Poll("the ConfigRejected Event naming the key", func() bool { return h.hasEvent("ConfigRejected", "keys schema rejected") })
	// A valid change afterwards is applied on top of the last good config.
	h.SetConfig(map[string]string{"schemaEnabled": "true", "schema": "mode: fast\nreplicas: 2\n"})
	h.Poll("replicas 2 rendered", func() bool { return h.configMap("schema")["replicas"] == "2" })
	if got := h.ReleaseRevision("schema"); got != 2 {
		t.Errorf("schema release revision = %d, want 2: the invalid ConfigMap deployed nothing", got)
	}
}

func TestInvalidSectionAtStartupSkipsOnlyThatModule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"schemaEnabled": "true", "schema": "replicas: 0\n"})
	h.start()
	h.expectTrace(0, startupTrace()...)
	h.WaitReady()
	if n := h.CountLog("module skipped: its ConfigMap section is invalid", map[string]string{"module": "schema", "error": "schema.replicas"}); n != 1 {
		t.Errorf("log lines reporting the skipped module = %d, want 1", n)
	}
	if got := h.ReleaseRevision("schema"); got != 0 {
		t.Errorf("schema release revision = %d, want none", got)
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1: the other modules converge", got)
	}
}
