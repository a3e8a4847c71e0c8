package catalogue

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// clusterInfo is echo-service's /info document, rendered from the global
// values the discovery hook sets.
type clusterInfo struct {
	ClusterName       string `json:"clusterName"`
	KubernetesVersion string `json:"kubernetesVersion"`
	NodeCount         int    `json:"nodeCount"`
}

// echoInfo returns echo-service's rendered /info, nil before it exists.
func (h *harness) echoInfo() *clusterInfo {
	h.T.Helper()
	data := h.ConfigMapData("echo-service")
	if data == nil {
		return nil
	}
	var info clusterInfo
	if err := json.Unmarshal([]byte(data["info.json"]), &info); err != nil {
		h.T.Fatalf("echo-service info.json %q: %v", data["info.json"], err)
	}
	return &info
}

// waitEchoInfo waits until echo-service's /info says want.
func (h *harness) waitEchoInfo(want clusterInfo) {
	h.T.Helper()
	var last *clusterInfo
	h.Poll("echo-service /info to be "+mustJSON(want), func() bool {
		last = h.echoInfo()
		return last != nil && *last == want
	})
}

// hasMetric reports whether a Prometheus text exposition has a sample of
// the metric with the value.
func hasMetric(text, name, value string) bool {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) && f[1] == value {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hasDaemonSet reports whether node-exporter's DaemonSet exists.
func (h *harness) hasDaemonSet() bool {
	h.T.Helper()
	_, err := h.Client.AppsV1().DaemonSets(h.Namespace).Get(h.T.Context(), "node-exporter", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		h.T.Fatalf("get DaemonSet node-exporter: %v", err)
	}
	return err == nil
}

// TestDiscoveryFeedsChartsAndEnabledScripts is not parallel: Nodes are
// cluster-wide, and the other tests' operators expect none.
func TestDiscoveryFeedsChartsAndEnabledScripts(t *testing.T) {
	h := newHarness(t)
	sv, err := h.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	h.SetConfig(map[string]string{
		"global":                   "clusterName: e2e\n",
		"echoServiceEnabled":       "true",
		"namespaceDefaultsEnabled": "false",
	})
	// What a Deployment would do: pass the server's version to the operator.
	h.start("KUBERNETES_VERSION=" + sv.GitVersion)
	h.WaitReady()

	// No nodes: node-exporter's enabled script disables it.
	h.waitEchoInfo(clusterInfo{"e2e", sv.GitVersion, 0})
	if h.hasDaemonSet() || h.ReleaseRevision("node-exporter") != 0 {
		t.Fatal("node-exporter installed on a cluster without nodes")
	}
	h.WaitLog(1, "hook output", map[string]string{"module": "node-exporter", "line": "nodeCount is 0, enabled: false"})

	// A Node appears: the discovery hook's event converges again, the chart
	// shows the count and the enabled script enables node-exporter.
	nodes := h.Client.CoreV1().Nodes()
	for _, name := range []string{"catalogue-node-a", "catalogue-node-b"} {
		t.Cleanup(func() { _ = nodes.Delete(context.WithoutCancel(t.Context()), name, metav1.DeleteOptions{}) })
	}
	if _, err := nodes.Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "catalogue-node-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitEchoInfo(clusterInfo{"e2e", sv.GitVersion, 1})
	h.Poll("node-exporter DaemonSet", h.hasDaemonSet)
	if _, err := h.Client.CoreV1().Services(h.Namespace).Get(t.Context(), "node-exporter", metav1.GetOptions{}); err != nil {
		t.Errorf("node-exporter Service: %v", err)
	}

	if _, err := nodes.Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "catalogue-node-b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitEchoInfo(clusterInfo{"e2e", sv.GitVersion, 2})
	// The hook's metric, served with the other hooks' metrics.
	metrics := h.baseURL() + "/metrics/hooks"
	h.Poll("addon_operator_discovered_nodes 2 in "+metrics, func() bool {
		return hasMetric(h.httpGet(metrics), "addon_operator_discovered_nodes", "2")
	})

	// The last Node goes: node-exporter is disabled and uninstalled.
	for _, name := range []string{"catalogue-node-a", "catalogue-node-b"} {
		if err := nodes.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitEchoInfo(clusterInfo{"e2e", sv.GitVersion, 0})
	h.Poll("node-exporter DaemonSet to be gone", func() bool { return !h.hasDaemonSet() })
	h.WaitModule("node-exporter", "disabled", func(m status.ModuleStatus) bool { return !m.Enabled && m.Phase == status.PhaseDisabled })
	if rev := h.ReleaseRevision("node-exporter"); rev != 0 {
		t.Errorf("node-exporter release revision %d after it was disabled, want uninstalled", rev)
	}
	if f := h.failures(); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}

func TestDiscoveryWithoutVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"echoServiceEnabled": "true", "namespaceDefaultsEnabled": "false"})
	h.start()
	h.WaitReady()
	// clusterName from modules/values.yaml; no KUBERNETES_VERSION.
	h.waitEchoInfo(clusterInfo{"cluster", "unknown", 0})
}
