package chart

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// access is one request the operator's ServiceAccount may or may not make.
type access struct {
	verb, group, resource, name string
	// namespace of the request; "" means the release namespace, "-" a
	// cluster-scoped request.
	namespace   string
	allowed     bool
	subresource string
}

func (a access) String() string {
	return fmt.Sprintf("%s %s.%s %q in %q", a.verb, a.resource, a.group, a.name, a.namespace)
}

// operatorAccess is what the operator itself needs, whatever the modules.
func operatorAccess() []access {
	return []access{
		{verb: "get", resource: "configmaps", name: "addon-operator", allowed: true},
		{verb: "list", resource: "configmaps", name: "addon-operator", allowed: true},
		{verb: "watch", resource: "configmaps", name: "addon-operator", allowed: true},
		{verb: "update", resource: "configmaps", name: "addon-operator", allowed: true},
		{verb: "create", resource: "configmaps", allowed: true},
		{verb: "get", resource: "secrets", name: "sh.helm.release.v1.web.v1", allowed: true},
		{verb: "list", resource: "secrets", allowed: true},
		{verb: "create", resource: "secrets", allowed: true},
		{verb: "update", resource: "secrets", name: "sh.helm.release.v1.web.v1", allowed: true},
		{verb: "delete", resource: "secrets", name: "sh.helm.release.v1.web.v1", allowed: true},
		{verb: "create", group: "events.k8s.io", resource: "events", allowed: true},
		{verb: "patch", group: "events.k8s.io", resource: "events", name: "e", allowed: true},
		{verb: "create", resource: "events", allowed: true},
	}
}

// moduleObjectAccess is what Module objects need by default: the objects,
// their status and their Events, which live in default.
func moduleObjectAccess() []access {
	return []access{
		{verb: "list", group: "addon-operator.io", resource: "modules", namespace: "-", allowed: true},
		{verb: "create", group: "addon-operator.io", resource: "modules", namespace: "-", allowed: true},
		{verb: "patch", group: "addon-operator.io", resource: "modules", name: "m", namespace: "-", allowed: true},
		{verb: "delete", group: "addon-operator.io", resource: "modules", name: "m", namespace: "-", allowed: true},
		{verb: "patch", group: "addon-operator.io", resource: "modules", subresource: "status", name: "m", namespace: "-", allowed: true},
		{verb: "create", group: "events.k8s.io", resource: "events", namespace: "default", allowed: true},
		{verb: "delete", group: "events.k8s.io", resource: "events", namespace: "default"},
		{verb: "list", group: "addon-operator.io", resource: "moduleconfigs", namespace: "-"},
	}
}

// catalogueAccess is what the image's catalogue needs with its default
// switches (rbac.generated's defaults), and the operator's own webhook
// configurations, which it creates by server-side apply under their name.
func catalogueAccess() []access {
	return []access{
		{verb: "watch", resource: "nodes", namespace: "-", allowed: true},
		{verb: "list", resource: "namespaces", namespace: "-", allowed: true},
		{verb: "create", resource: "resourcequotas", namespace: "other", allowed: true},
		{verb: "update", resource: "limitranges", name: "namespace-defaults", namespace: "other", allowed: true},
		{verb: "update", resource: "limitranges", name: "other", namespace: "other"},
		{verb: "patch", resource: "nodes", name: "n", namespace: "-"},
		{verb: "create", group: "apps", resource: "daemonsets", allowed: true},
		{verb: "watch", resource: "services", allowed: true},
		{verb: "create", group: "apps", resource: "daemonsets", namespace: "other"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "$ns-addon-operator", namespace: "-", allowed: true},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "$ns-addon-operator", namespace: "-", allowed: true},
	}
}

// moduleConfigAccess is what ModuleConfigs need, with Module objects off.
func moduleConfigAccess() []access {
	return []access{
		{verb: "list", group: "addon-operator.io", resource: "moduleconfigs", namespace: "-", allowed: true},
		{verb: "watch", group: "addon-operator.io", resource: "moduleconfigs", namespace: "-", allowed: true},
		{verb: "update", group: "addon-operator.io", resource: "moduleconfigs", name: "m", namespace: "-", allowed: true},
		{verb: "patch", group: "addon-operator.io", resource: "moduleconfigs", subresource: "status", name: "m", namespace: "-", allowed: true},
		{verb: "delete", group: "addon-operator.io", resource: "moduleconfigs", name: "m", namespace: "-"},
		{verb: "list", group: "addon-operator.io", resource: "modules", namespace: "-"},
		{verb: "create", group: "events.k8s.io", resource: "events", namespace: "default"},
	}
}

// TestServiceAccountRights asks the API server's RBAC authorizer what the
// operator's ServiceAccount may do under each value set.
func TestServiceAccountRights(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		vals map[string]any
		want []access
	}{
		{
			name: "no module rules",
			vals: map[string]any{"rbac": map[string]any{"moduleRules": []any{}}},
			want: append(operatorAccess(),
				access{verb: "update", resource: "configmaps", name: "other"},
				access{verb: "delete", resource: "configmaps", name: "addon-operator"},
				access{verb: "watch", resource: "secrets", allowed: true},
				access{verb: "create", group: "apps", resource: "deployments"},
				access{verb: "get", group: "coordination.k8s.io", resource: "leases", name: "addon-operator-leader-election"},
				access{verb: "create", group: "coordination.k8s.io", resource: "leases"},
			),
		},
		{
			name: "defaults",
			want: append(append(append(operatorAccess(), moduleObjectAccess()...), catalogueAccess()...), escalationAccess()...),
		},
		{
			name: "moduleconfig source",
			vals: map[string]any{"api": map[string]any{"moduleObjects": false, "configSource": "moduleconfig"}},
			want: moduleConfigAccess(),
		},
		{
			name: "ha",
			vals: map[string]any{"ha": map[string]any{"enabled": true, "leaseName": "elect"}},
			want: []access{
				{verb: "get", group: "coordination.k8s.io", resource: "leases", name: "elect", allowed: true},
				{verb: "update", group: "coordination.k8s.io", resource: "leases", name: "elect", allowed: true},
				{verb: "create", group: "coordination.k8s.io", resource: "leases", allowed: true},
				{verb: "update", group: "coordination.k8s.io", resource: "leases", name: "other"},
				{verb: "delete", group: "coordination.k8s.io", resource: "leases", name: "elect"},
			},
		},
		{
			name: "cluster-wide",
			vals: map[string]any{"rbac": map[string]any{"clusterWide": true}},
			want: []access{
				{verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: true},
				{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "-", allowed: true},
				{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles", namespace: "-", allowed: true},
				{verb: "list", resource: "namespaces", namespace: "-", allowed: true},
			},
		},
		{
			name: "rbac off",
			vals: map[string]any{"rbac": map[string]any{"create": false}},
			want: []access{
				{verb: "get", resource: "configmaps", name: "addon-operator"},
				{verb: "create", resource: "secrets"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := cp.Namespace(t)
			install(t, ns, tt.vals)
			for _, a := range tt.want {
				if got := allowed(t, ns, a); got != a.allowed {
					t.Errorf("%s: allowed = %v, want %v", a, got, a.allowed)
				}
			}
		})
	}
}

// escalationAccess are requests the default chart must refuse: writes
// beyond the catalogue's needs and each step towards cluster-admin (any
// webhook configuration, any CRD, any ClusterRole or binding).
func escalationAccess() []access {
	return []access{
		{verb: "create", group: "apps", resource: "deployments"},
		{verb: "delete", resource: "configmaps", name: "other"},
		{verb: "create", group: "apps", resource: "deployments", namespace: "default"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "roles"},
		{verb: "create", resource: "pods"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles", namespace: "-"},
		{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "-"},
		{verb: "patch", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "any.example.com", namespace: "-"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", namespace: "-"},
		{verb: "create", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "other", namespace: "-"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "other", namespace: "-"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", namespace: "-"},
	}
}

// allowed asks a SubjectAccessReview whether the operator's ServiceAccount
// in ns may make the request a.
func allowed(t *testing.T, ns string, a access) bool {
	t.Helper()
	name := strings.ReplaceAll(a.name, "$ns", ns)
	attrs := &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: name}
	switch a.namespace {
	case "":
		attrs.Namespace = ns
	case "-":
	default:
		attrs.Namespace = a.namespace
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               "system:serviceaccount:" + ns + ":addon-operator",
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: attrs,
	}}
	got, err := cp.Clientset(t).AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("subject access review for %s: %v", a, err)
	}
	return got.Status.Allowed
}

// operatorRules are the Role's rules for the operator itself, with its
// ConfigMap named configMap.
func operatorRules(configMap string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{configMap}, Verbs: []string{"get", "list", "watch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
}

// leaseRules are the Role's rules for leader election on the Lease name.
func leaseRules(name string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
	}
}

// defaultModuleRules are rbac.generated.rules' defaults: what the image's
// catalogue deploys in the release namespace.
func defaultModuleRules() []rbacv1.PolicyRule {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: all},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: all},
	}
}

// serviceAccountSubjects binds the operator's ServiceAccount in ns.
func serviceAccountSubjects(ns string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "addon-operator", Namespace: ns}}
}

// checkClusterRBAC checks the cluster-wide ClusterRole and its binding for
// the release in ns exist when want is true and are absent otherwise.
func checkClusterRBAC(t *testing.T, ns string, want bool) {
	t.Helper()
	client := cp.Clientset(t).RbacV1()
	name := ns + "-addon-operator"
	role, err := client.ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
	if !want {
		if !apierrors.IsNotFound(err) {
			t.Errorf("get ClusterRole %s: err = %v, want NotFound", name, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("get ClusterRole %s: %v", name, err)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}},
	}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
	binding, err := client.ClusterRoleBindings().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ClusterRoleBinding %s: %v", name, err)
	}
	wantRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	if diff := cmp.Diff(wantRef, binding.RoleRef); diff != "" {
		t.Errorf("ClusterRoleBinding roleRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(serviceAccountSubjects(ns), binding.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
	}
}

// TestNarrowClusterRights checks the narrower alternative to clusterWide:
// read and watch everywhere, write only in the release namespace and the
// listed ones.
func TestNarrowClusterRights(t *testing.T) {
	t.Parallel()
	ns, extra, other := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	all := []any{"get", "list", "watch", "create", "update", "patch", "delete"}
	install(t, ns, map[string]any{"rbac": map[string]any{
		"clusterRead": map[string]any{"enabled": true},
		"namespaces":  []any{extra},
		"moduleRules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": all},
			map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": all},
		},
	}})
	for _, a := range []access{
		{verb: "watch", resource: "pods", namespace: other, allowed: true},
		{verb: "list", resource: "namespaces", namespace: "-", allowed: true},
		{verb: "get", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "-", allowed: true},
		{verb: "create", group: "apps", resource: "deployments", allowed: true},
		{verb: "create", group: "apps", resource: "deployments", namespace: extra, allowed: true},
		{verb: "delete", resource: "secrets", name: "s", namespace: extra, allowed: true},
		{verb: "create", group: "apps", resource: "deployments", namespace: other},
		{verb: "patch", resource: "configmaps", name: "c", namespace: other},
		{verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "-"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles", namespace: "-"},
		{verb: "create", resource: "pods", namespace: extra},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: extra},
	} {
		if got := allowed(t, ns, a); got != a.allowed {
			t.Errorf("%s: allowed = %v, want %v", a, got, a.allowed)
		}
	}
	// clusterWide covers clusterRead: no second ClusterRole then.
	wide := cp.Namespace(t)
	install(t, wide, map[string]any{"rbac": map[string]any{"clusterWide": true, "clusterRead": map[string]any{"enabled": true}}})
	_, err := cp.Clientset(t).RbacV1().ClusterRoles().Get(t.Context(), wide+"-addon-operator-read", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("read-only ClusterRole next to clusterWide: err = %v, want NotFound", err)
	}
}
