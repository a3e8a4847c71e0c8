package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/pkg/config"
)

// operatorPort is the operator's HTTP listener: metrics and probes.
const operatorPort = 9650

func TestDefaults(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	ensureServiceMonitorCRD(t)
	rel := install(t, ns, nil)
	client := cp.Clientset(t)

	sa, err := client.CoreV1().ServiceAccounts(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ServiceAccount: %v", err)
	}
	if sa.Labels["app.kubernetes.io/name"] != "addon-operator" {
		t.Errorf("ServiceAccount labels = %v, want app.kubernetes.io/name=addon-operator", sa.Labels)
	}
	checkRole(t, ns, slices.Concat(operatorRules("addon-operator"), defaultModuleRules()))
	checkRoleBinding(t, ns)
	checkDeployment(t, ns)
	checkService(t, ns)

	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ConfigMap: %v", err)
	}
	if _, err := config.Parse(cm.Data); err != nil {
		t.Errorf("the operator rejects the default ConfigMap: %v", err)
	}

	if strings.Contains(rel.Manifest, "kind: ServiceMonitor") {
		t.Error("the release renders a ServiceMonitor by default")
	}
	if n := len(serviceMonitors(t, ns)); n != 0 {
		t.Errorf("%d ServiceMonitors in the namespace, want none by default", n)
	}
	if _, err := client.PolicyV1().PodDisruptionBudgets(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get PodDisruptionBudget with one replica: err = %v, want NotFound", err)
	}
	checkClusterRBAC(t, ns, false)
}

// startArgs is the container's command line: start, the hook files in the
// /tmp emptyDir, then extra.
func startArgs(extra ...string) []string {
	return append([]string{"start", "--tmp-dir=/tmp/addon-operator"}, extra...)
}

// checkRole compares the Role's rules with want.
func checkRole(t *testing.T, ns string, want []rbacv1.PolicyRule) {
	t.Helper()
	role, err := cp.Clientset(t).RbacV1().Roles(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Role: %v", err)
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("Role rules (-want +got):\n%s", diff)
	}
}

func checkRoleBinding(t *testing.T, ns string) {
	t.Helper()
	rb, err := cp.Clientset(t).RbacV1().RoleBindings(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get RoleBinding: %v", err)
	}
	wantRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "addon-operator"}
	if diff := cmp.Diff(wantRef, rb.RoleRef); diff != "" {
		t.Errorf("RoleBinding roleRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(serviceAccountSubjects(ns), rb.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects (-want +got):\n%s", diff)
	}
}

// checkDeployment checks the default Deployment: one replica replaced by
// Recreate, the operator's args, env, probes, resources and hardening.
func checkDeployment(t *testing.T, ns string) {
	t.Helper()
	d := deployment(t, ns)
	if got := ptr.Deref(d.Spec.Replicas, 0); got != 1 {
		t.Errorf("replicas = %d, want 1", got)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy = %s, want Recreate: two operators without leader election must not overlap", d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != "addon-operator" {
		t.Errorf("serviceAccountName = %q, want addon-operator", pod.ServiceAccountName)
	}
	wantPodSC := &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		RunAsGroup:     ptr.To[int64](65532),
		FSGroup:        ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if diff := cmp.Diff(wantPodSC, pod.SecurityContext); diff != "" {
		t.Errorf("pod securityContext (-want +got):\n%s", diff)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if diff := cmp.Diff(startArgs(), c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if c.Image != "ghcr.io/addon-operator/addon-operator:"+loadChart(t).Metadata.AppVersion {
		t.Errorf("image = %q, want the appVersion tag", c.Image)
	}
	if diff := cmp.Diff(defaultEnv(ns, "addon-operator"), c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantPorts := []corev1.ContainerPort{
		{Name: "http", ContainerPort: operatorPort, Protocol: corev1.ProtocolTCP},
		{Name: "webhook", ContainerPort: 9680, Protocol: corev1.ProtocolTCP},
	}
	if diff := cmp.Diff(wantPorts, c.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	checkProbes(t, c)
	checkContainerSecurity(t, pod, c)
	// Hooks' files in memory, bounded.
	wantTmp := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("64Mi"))}
	var gotTmp *corev1.EmptyDirVolumeSource
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "tmp" {
			gotTmp = pod.Volumes[i].EmptyDir
		}
	}
	if diff := cmp.Diff(wantTmp, gotTmp); diff != "" {
		t.Errorf("tmp volume (-want +got):\n%s", diff)
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[name]; !ok {
			t.Errorf("no %s request", name)
		}
	}
	if got := c.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("128Mi")) <= 0 {
		t.Errorf("memory limit = %s, want one above the request", got.String())
	}
}

func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"startup", c.StartupProbe, "/healthz"},
		{"liveness", c.LivenessProbe, "/healthz"},
		{"readiness", c.ReadinessProbe, "/readyz"},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe = %+v, want an HTTP GET", p.name, p.probe)
			continue
		}
		want := corev1.HTTPGetAction{Path: p.path, Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}
		if diff := cmp.Diff(want, *p.probe.HTTPGet); diff != "" {
			t.Errorf("%s probe (-want +got):\n%s", p.name, diff)
		}
	}
}

// checkContainerSecurity checks the container runs hardened and that the
// paths the operator writes to are writable emptyDirs.
func checkContainerSecurity(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	want := &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](65532),
		RunAsGroup:               ptr.To[int64](65532),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if diff := cmp.Diff(want, c.SecurityContext); diff != "" {
		t.Errorf("container securityContext (-want +got):\n%s", diff)
	}
	emptyDirs := map[string]bool{}
	for i := range pod.Volumes {
		emptyDirs[pod.Volumes[i].Name] = pod.Volumes[i].EmptyDir != nil
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if emptyDirs[m.Name] && !m.ReadOnly {
			mounts[m.MountPath] = m.Name
		}
	}
	// --tmp-dir is /tmp/addon-operator; --debug-socket lives in
	// /var/run/addon-operator.
	for _, path := range []string{"/tmp", "/var/run/addon-operator"} {
		if mounts[path] == "" {
			t.Errorf("no writable emptyDir at %s; mounts %v", path, c.VolumeMounts)
		}
	}
}

func checkService(t *testing.T, ns string) {
	t.Helper()
	svc, err := cp.Clientset(t).CoreV1().Services(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Service: %v", err)
	}
	want := []corev1.ServicePort{{Name: "http", Port: operatorPort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, svc.Spec.Ports); diff != "" {
		t.Errorf("Service ports (-want +got):\n%s", diff)
	}
	podLabels := deployment(t, ns).Spec.Template.Labels
	for k, v := range svc.Spec.Selector {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%s does not match the pod labels %v", k, v, podLabels)
		}
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("Service has no selector")
	}
}

// defaultEnv is the container's environment with the ConfigMap named
// configMap, the default log settings and the webhook server's settings
// for a release addon-operator in namespace ns.
func defaultEnv(ns, configMap string) []corev1.EnvVar {
	fieldRef := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	return []corev1.EnvVar{
		{Name: "ADDON_OPERATOR_NAMESPACE", ValueFrom: fieldRef("metadata.namespace")},
		{Name: "ADDON_OPERATOR_POD", ValueFrom: fieldRef("metadata.name")},
		{Name: "ADDON_OPERATOR_CONFIG_MAP", Value: configMap},
		{Name: "ADDON_OPERATOR_MODULE_OBJECTS", Value: "true"},
		{Name: "ADDON_OPERATOR_CONFIG_SOURCE", Value: "configmap"},
		{Name: "LOG_LEVEL", Value: "info"},
		{Name: "LOG_TYPE", Value: "json"},
		{Name: "ADDON_OPERATOR_WEBHOOK_SERVER", Value: "true"},
		{Name: "VALIDATING_WEBHOOK_SERVICE_NAME", Value: "addon-operator-webhook"},
		{Name: "ADDON_OPERATOR_WEBHOOK_CERT_SECRET", Value: "addon-operator-webhook-tls"},
		{Name: "VALIDATING_WEBHOOK_CONFIGURATION_NAME", Value: ns + "-addon-operator"},
		{Name: "MUTATING_WEBHOOK_CONFIGURATION_NAME", Value: ns + "-addon-operator"},
		{Name: "ADDON_OPERATOR_CONFIG_MAP_VALIDATION", Value: "true"},
		{Name: "ADDON_OPERATOR_CONFIG_MAP_VALIDATION_FAILURE_POLICY", Value: "Ignore"},
	}
}

// deployment returns the operator's Deployment in ns.
func deployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d, err := cp.Clientset(t).AppsV1().Deployments(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Deployment: %v", err)
	}
	return d
}
