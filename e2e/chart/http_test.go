package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// reviewAccess are the cluster-scoped reviews the operator makes to check
// bearer tokens on its HTTP port.
func reviewAccess(allowed bool) []access {
	return []access{
		{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews", namespace: "-", allowed: allowed},
		{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews", namespace: "-", allowed: allowed},
	}
}

// TestHTTPAuthOff: by default the operator has no review rights and no
// reader ClusterRoles exist, since nothing on its HTTP port needs a token.
func TestHTTPAuthOff(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	install(t, ns, nil)
	for _, a := range reviewAccess(false) {
		if got := allowed(t, ns, a); got != a.allowed {
			t.Errorf("%s: allowed = %v, want %v", a, got, a.allowed)
		}
	}
	roles := cp.Clientset(t).RbacV1().ClusterRoles()
	for _, suffix := range []string{"-http-auth", "-debug-reader", "-metrics-reader"} {
		if _, err := roles.Get(t.Context(), ns+"-addon-operator"+suffix, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get ClusterRole %s: err = %v, want NotFound", ns+"-addon-operator"+suffix, err)
		}
	}
}

// TestHTTPAuth: http.debugAPI, http.metricsAuth and http.tls pass their
// flags, grant the operator the reviews, render the reader ClusterRoles,
// switch the probes to HTTPS and make the ServiceMonitor scrape over TLS
// with Prometheus' token.
func TestHTTPAuth(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	ensureServiceMonitorCRD(t)
	install(t, ns, map[string]any{
		"http":           map[string]any{"debugAPI": true, "metricsAuth": true, "tls": true},
		"serviceMonitor": map[string]any{"enabled": true},
	})
	c := deployment(t, ns).Spec.Template.Spec.Containers[0]
	if diff := cmp.Diff(startArgs("--debug-http", "--metrics-auth", "--listen-tls"), c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %+v, want an HTTPS GET", name, p)
		}
	}
	for _, a := range reviewAccess(true) {
		if got := allowed(t, ns, a); got != a.allowed {
			t.Errorf("%s: allowed = %v, want %v", a, got, a.allowed)
		}
	}
	// Nothing more than the reviews: the rights stay what the catalogue's
	// generated rules and the namespaced Role give.
	for _, a := range []access{
		{verb: "list", resource: "secrets", namespace: "-"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles", namespace: "-"},
	} {
		if allowed(t, ns, a) {
			t.Errorf("%s: allowed, want denied", a)
		}
	}
	roles := cp.Clientset(t).RbacV1().ClusterRoles()
	for suffix, want := range map[string][]string{
		"-debug-reader":   {"/debug/*"},
		"-metrics-reader": {"/metrics", "/metrics/hooks"},
	} {
		role, err := roles.Get(t.Context(), ns+"-addon-operator"+suffix, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get ClusterRole: %v", err)
		}
		wantRules := []rbacv1.PolicyRule{{NonResourceURLs: want, Verbs: []string{"get"}}}
		if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
			t.Errorf("ClusterRole %s rules (-want +got):\n%s", role.Name, diff)
		}
	}
	monitors := serviceMonitors(t, ns)
	if len(monitors) != 1 {
		t.Fatalf("%d ServiceMonitors, want 1", len(monitors))
	}
	endpoints, _, err := unstructured.NestedSlice(monitors[0].Object, "spec", "endpoints")
	if err != nil || len(endpoints) != 2 {
		t.Fatalf("ServiceMonitor endpoints: %v, %v", endpoints, err)
	}
	for _, e := range endpoints {
		got := e.(map[string]any) //nolint:forcetypeassert // endpoints are objects
		want := map[string]any{   //nolint:gosec // G101: the path of the mounted ServiceAccount token, no credential
			"port": "http", "path": got["path"], "interval": "30s", "scheme": "https",
			"tlsConfig":       map[string]any{"insecureSkipVerify": true},
			"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ServiceMonitor endpoint (-want +got):\n%s", diff)
		}
	}
}

func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	monitoring := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"},
	}}
	prometheus := networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "observability"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "prometheus"}},
	}
	tests := []struct {
		name string
		vals map[string]any
		want []networkingv1.NetworkPolicyPeer // nil: no NetworkPolicy
	}{
		{name: "off by default"},
		{name: "the monitoring namespace", vals: map[string]any{"networkPolicy": map[string]any{"enabled": true}}, want: []networkingv1.NetworkPolicyPeer{monitoring}},
		{name: "chosen peers", vals: map[string]any{"networkPolicy": map[string]any{"enabled": true, "from": []any{
			map[string]any{
				"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "observability"}},
				"podSelector":       map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "prometheus"}},
			},
		}}}, want: []networkingv1.NetworkPolicyPeer{prometheus}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := cp.Namespace(t)
			install(t, ns, tt.vals)
			np, err := cp.Clientset(t).NetworkingV1().NetworkPolicies(ns).Get(t.Context(), "addon-operator", metav1.GetOptions{})
			if tt.want == nil {
				if !apierrors.IsNotFound(err) {
					t.Errorf("get NetworkPolicy: err = %v, want NotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("get NetworkPolicy: %v", err)
			}
			want := networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: deployment(t, ns).Spec.Selector.MatchLabels},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("http"))}},
					From:  tt.want,
				}, {
					// The API server calls webhooks from wherever it runs.
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("webhook"))}},
				}},
			}
			if diff := cmp.Diff(want, np.Spec); diff != "" {
				t.Errorf("NetworkPolicy spec (-want +got):\n%s", diff)
			}
		})
	}
}
