package chart

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// haArgs are the container's args under leader election with the default
// Lease name.
func haArgs() []string {
	return startArgs("--ha", "--ha-lease-name=addon-operator-leader-election")
}

func TestTwoReplicas(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{"replicas": 2})
	checkHA(t, ns, 2)
	pdb, err := cp.Clientset(t).PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get PodDisruptionBudget: %v", err)
	}
	if got := pdb.Spec.MaxUnavailable; got == nil || *got != intstr.FromInt32(1) {
		t.Errorf("PodDisruptionBudget maxUnavailable = %v, want 1", got)
	}
	podLabels := deployment(t, ns).Spec.Template.Labels
	if pdb.Spec.Selector == nil || len(pdb.Spec.Selector.MatchLabels) == 0 {
		t.Fatalf("PodDisruptionBudget selector = %v, want the pod labels", pdb.Spec.Selector)
	}
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if podLabels[k] != v {
			t.Errorf("PodDisruptionBudget selects %s=%s, the pods have %v", k, v, podLabels)
		}
	}
}

func TestHAWithOneReplica(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{"ha": map[string]any{"enabled": true}})
	checkHA(t, ns, 1)
	if _, err := cp.Clientset(t).PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get PodDisruptionBudget with one replica: err = %v, want NotFound", err)
	}
}

// checkHA checks a Deployment of replicas under leader election: --ha in
// the args, a rolling update (pods wait for the Lease, so they may
// overlap) and the Lease in the Role.
func checkHA(t *testing.T, ns string, replicas int32) {
	t.Helper()
	d := deployment(t, ns)
	if got := *d.Spec.Replicas; got != replicas {
		t.Errorf("replicas = %d, want %d", got, replicas)
	}
	if diff := cmp.Diff(haArgs(), d.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("strategy = %s, want RollingUpdate", d.Spec.Strategy.Type)
	}
	checkRole(t, ns, slices.Concat(operatorRules("addon-operator"), leaseRules("addon-operator-leader-election"), defaultModuleRules()))
}

func TestClusterWide(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{"rbac": map[string]any{"clusterWide": true}})
	checkClusterRBAC(t, ns, true)
	// The namespaced Role stays: it is what the operator needs without
	// the opt-in.
	checkRole(t, ns, slices.Concat(operatorRules("addon-operator"), defaultModuleRules()))
}

func TestServiceMonitor(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	ensureServiceMonitorCRD(t)
	install(t, ns, map[string]any{"serviceMonitor": map[string]any{
		"enabled": true, "interval": "15s", "labels": map[string]any{"release": "prom"},
	}})
	monitors := serviceMonitors(t, ns)
	if len(monitors) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1", len(monitors))
	}
	sm := monitors[0]
	if sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor labels = %v, want release=prom from serviceMonitor.labels", sm.GetLabels())
	}
	want := []any{
		map[string]any{"port": "http", "path": "/metrics", "interval": "15s"},
		map[string]any{"port": "http", "path": "/metrics/hooks", "interval": "15s"},
	}
	endpoints, _, err := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if err != nil {
		t.Fatalf("ServiceMonitor endpoints: %v", err)
	}
	if diff := cmp.Diff(want, endpoints); diff != "" {
		t.Errorf("ServiceMonitor endpoints (-want +got):\n%s", diff)
	}
	svc, err := cp.Clientset(t).CoreV1().Services(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selector, _, err := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if err != nil {
		t.Fatalf("ServiceMonitor selector: %v", err)
	}
	for k, v := range selector {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v, the Service has %v", k, v, svc.Labels)
		}
	}
	if len(selector) == 0 {
		t.Error("ServiceMonitor has no selector")
	}
}

// TestUserManagedConfigMap: with configMap.create false the chart leaves
// the ConfigMap alone but still points the operator, and its rights, at it.
func TestUserManagedConfigMap(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{"configMap": map[string]any{"create": false, "name": "mine"}})
	client := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	for _, name := range []string{"mine", "addon-operator"} {
		if _, err := client.Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get ConfigMap %s: err = %v, want NotFound", name, err)
		}
	}
	if diff := cmp.Diff(defaultEnv(ns, "mine"), deployment(t, ns).Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	checkRole(t, ns, slices.Concat(operatorRules("mine"), defaultModuleRules()))
}

// TestConfigValues checks the chart writes config in the form the
// operator parses.
func TestConfigValues(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{"config": map[string]any{
		"global":             map[string]any{"clusterName": "prod", "ha": true},
		"certManager":        map[string]any{"issuers": []any{"a", "b"}},
		"certManagerEnabled": true,
		"ingressEnabled":     "false",
	}})
	cm, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ConfigMap: %v", err)
	}
	got, err := config.Parse(cm.Data)
	if err != nil {
		t.Fatalf("the operator rejects the ConfigMap %v: %v", cm.Data, err)
	}
	want := &config.Config{
		Global:  values.Values{"clusterName": "prod", "ha": true},
		Modules: map[string]values.Values{"certManager": {"issuers": []any{"a", "b"}}},
		Enabled: map[string]bool{"certManager": true, "ingress": false},
	}
	if diff := cmp.Diff(want.Global, got.Global); diff != "" {
		t.Errorf("global (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Modules, got.Modules); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Enabled, got.Enabled); diff != "" {
		t.Errorf("enabled (-want +got):\n%s", diff)
	}
}

// TestUpgradeToHAAndBack scales a release up and down with helm upgrade:
// the strategy switches between Recreate and RollingUpdate, the PDB and the
// Lease rights come and go.
func TestUpgradeToHAAndBack(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, nil)
	upgrade(t, ns, map[string]any{"replicas": 3})
	checkHA(t, ns, 3)
	pdbs := cp.Clientset(t).PolicyV1().PodDisruptionBudgets(ns)
	if _, err := pdbs.Get(t.Context(), "addon-operator", metav1.GetOptions{}); err != nil {
		t.Errorf("get PodDisruptionBudget after scaling to 3: %v", err)
	}
	upgrade(t, ns, nil)
	d := deployment(t, ns)
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate != nil {
		t.Errorf("strategy after scaling back = %+v, want Recreate", d.Spec.Strategy)
	}
	if diff := cmp.Diff(startArgs(), d.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("args after scaling back (-want +got):\n%s", diff)
	}
	if _, err := pdbs.Get(t.Context(), "addon-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get PodDisruptionBudget after scaling back: err = %v, want NotFound", err)
	}
	checkRole(t, ns, slices.Concat(operatorRules("addon-operator"), defaultModuleRules()))
}

// TestPodSettings sets the optional pod values and checks they reach the
// stored Deployment after the API server's validation.
func TestPodSettings(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, map[string]any{
		"image":             map[string]any{"repository": "registry.example.com/addon-operator", "tag": "v1.2.3", "pullPolicy": "Always"},
		"imagePullSecrets":  []any{map[string]any{"name": "registry"}},
		"extraArgs":         []any{"--hook-timeout=5m"},
		"extraEnv":          []any{map[string]any{"name": "HELM_TIMEOUT", "value": "10m"}},
		"podLabels":         map[string]any{"team": "platform"},
		"podAnnotations":    map[string]any{"example.com/owner": "platform"},
		"priorityClassName": "platform",
		"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
		"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
		"log":               map[string]any{"level": "debug", "type": "text"},
	})
	pod := deployment(t, ns).Spec.Template
	c := pod.Spec.Containers[0]
	type summary struct {
		Image, PullPolicy, PullSecret, Priority, Label, Annotation, NodeOS, Toleration string
		Args                                                                           []string
		Env                                                                            map[string]string
	}
	got := summary{
		Image: c.Image, PullPolicy: string(c.ImagePullPolicy), Priority: pod.Spec.PriorityClassName,
		Label: pod.Labels["team"], Annotation: pod.Annotations["example.com/owner"], NodeOS: pod.Spec.NodeSelector["kubernetes.io/os"],
		Args: c.Args, Env: map[string]string{},
	}
	if len(pod.Spec.ImagePullSecrets) == 1 {
		got.PullSecret = pod.Spec.ImagePullSecrets[0].Name
	}
	if len(pod.Spec.Tolerations) == 1 {
		got.Toleration = pod.Spec.Tolerations[0].Key
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			got.Env[e.Name] = e.Value
		}
	}
	want := summary{
		Image: "registry.example.com/addon-operator:v1.2.3", PullPolicy: "Always", PullSecret: "registry", Priority: "platform",
		Label: "platform", Annotation: "platform", NodeOS: "linux", Toleration: "dedicated",
		Args: startArgs("--hook-timeout=5m"),
		Env: map[string]string{
			"ADDON_OPERATOR_CONFIG_MAP": "addon-operator", "LOG_LEVEL": "debug", "LOG_TYPE": "text", "HELM_TIMEOUT": "10m",
			"ADDON_OPERATOR_MODULE_OBJECTS": "true", "ADDON_OPERATOR_CONFIG_SOURCE": "configmap",
			"ADDON_OPERATOR_WEBHOOK_SERVER": "true", "VALIDATING_WEBHOOK_SERVICE_NAME": "addon-operator-webhook",
			"ADDON_OPERATOR_WEBHOOK_CERT_SECRET":    "addon-operator-webhook-tls",
			"VALIDATING_WEBHOOK_CONFIGURATION_NAME": ns + "-addon-operator", "MUTATING_WEBHOOK_CONFIGURATION_NAME": ns + "-addon-operator",
			"ADDON_OPERATOR_CONFIG_MAP_VALIDATION": "true", "ADDON_OPERATOR_CONFIG_MAP_VALIDATION_FAILURE_POLICY": "Ignore",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod settings (-want +got):\n%s", diff)
	}
}
