package rbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

const testNS = "ops"

func obj(apiVersion, kind, namespace, name string) map[string]any {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

func crd(group, kind, plural, scope string) map[string]any {
	o := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+"."+group)
	o["spec"] = map[string]any{"group": group, "scope": scope, "names": map[string]any{"kind": kind, "plural": plural}}
	return o
}

func rule(group string, resources, names, verbs []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, ResourceNames: names, Verbs: verbs}
}

// The verb sets Compute grants, as in compute.go.
func all() []string   { return []string{"get", "list", "watch", "create", "update", "patch", "delete"} }
func read() []string  { return []string{"get", "list", "watch"} }
func anyV() []string  { return []string{"list", "watch", "create"} }
func named() []string { return []string{"get", "update", "patch", "delete"} }

// computeCase is one Compute call and what it must return.
type computeCase struct {
	name     string
	inputs   []Input
	want     Rules
	warnings []string
}

func checkCompute(t *testing.T, tests []computeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := Compute(testNS, tt.inputs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeCharts checks what a chart's objects take.
func TestComputeCharts(t *testing.T) {
	checkCompute(t, []computeCase{
		{
			name: "namespaced objects: every verb in their namespace, one rule per group",
			inputs: []Input{{Owner: "web", Objects: []map[string]any{
				obj("v1", "ConfigMap", "", "a"), obj("v1", "Service", "", "a"), obj("apps/v1", "Deployment", "", "a"),
				obj("v1", "ConfigMap", "other", "b"), obj("networking.k8s.io/v1", "NetworkPolicy", testNS, "c"),
			}}},
			want: Rules{
				Rules: []rbacv1.PolicyRule{
					rule("", []string{"configmaps", "services"}, nil, all()),
					rule("apps", []string{"deployments"}, nil, all()),
					rule("networking.k8s.io", []string{"networkpolicies"}, nil, all()),
				},
				Namespaces:   map[string][]rbacv1.PolicyRule{"other": {rule("", []string{"configmaps"}, nil, all())}},
				ClusterRules: []rbacv1.PolicyRule{},
			},
		},
		{
			name: "cluster-scoped objects: changes by name only",
			inputs: []Input{{Owner: "crds", Objects: []map[string]any{
				crd("example.com", "Widget", "widgets", "Namespaced"), crd("example.com", "Gadget", "gadgets", "Cluster"),
				obj("example.com/v1", "Widget", "", "w"), obj("example.com/v1", "Gadget", "", "g"),
				obj("storage.k8s.io/v1", "StorageClass", "", "fast"),
			}}},
			want: Rules{
				Rules:      []rbacv1.PolicyRule{rule("example.com", []string{"widgets"}, nil, all())},
				Namespaces: map[string][]rbacv1.PolicyRule{},
				ClusterRules: []rbacv1.PolicyRule{
					rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, nil, anyV()),
					rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, []string{"gadgets.example.com", "widgets.example.com"}, named()),
					rule("example.com", []string{"gadgets"}, nil, anyV()),
					rule("example.com", []string{"gadgets"}, []string{"g"}, named()),
					rule("storage.k8s.io", []string{"storageclasses"}, nil, anyV()),
					rule("storage.k8s.io", []string{"storageclasses"}, []string{"fast"}, named()),
				},
			},
		},
		{
			name: "crds/: applied by name",
			inputs: []Input{{Owner: "m", CRDs: []map[string]any{crd("example.com", "Widget", "widgets", "Namespaced")}, Objects: []map[string]any{
				obj("example.com/v1", "Widget", "", "w"),
			}}},
			want: Rules{
				Rules:        []rbacv1.PolicyRule{rule("example.com", []string{"widgets"}, nil, all())},
				Namespaces:   map[string][]rbacv1.PolicyRule{},
				ClusterRules: []rbacv1.PolicyRule{rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, []string{"widgets.example.com"}, []string{"get", "create", "patch"})},
			},
		},
		{
			name:   "unknown kinds are taken as namespaced, with a warning",
			inputs: []Input{{Owner: "m", Objects: []map[string]any{obj("monitoring.coreos.com/v1", "ServiceMonitor", "", "s")}}},
			want: Rules{
				Rules:        []rbacv1.PolicyRule{rule("monitoring.coreos.com", []string{"servicemonitors"}, nil, all())},
				Namespaces:   map[string][]rbacv1.PolicyRule{},
				ClusterRules: []rbacv1.PolicyRule{},
			},
			warnings: []string{"m: monitoring.coreos.com/v1 ServiceMonitor is neither built in nor defined by a CRD of the modules: taken as namespaced"},
		},
	})
}

// TestComputeRoles checks what rendered roles and bindings take.
func TestComputeRoles(t *testing.T) {
	checkCompute(t, []computeCase{
		{
			name: "roles: the rights they grant; bindings to other roles: bind on them",
			inputs: []Input{{Owner: "m", Objects: []map[string]any{
				func() map[string]any {
					o := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "ctl")
					o["rules"] = []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods/exec"}, "verbs": []any{"create"}}}
					return o
				}(),
				func() map[string]any {
					o := obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "ctl")
					o["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ctl"}
					return o
				}(),
				func() map[string]any {
					o := obj("rbac.authorization.k8s.io/v1", "RoleBinding", "", "view")
					o["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
					return o
				}(),
			}}},
			want: Rules{
				Rules:      []rbacv1.PolicyRule{rule("rbac.authorization.k8s.io", []string{"rolebindings"}, nil, all())},
				Namespaces: map[string][]rbacv1.PolicyRule{},
				ClusterRules: []rbacv1.PolicyRule{
					rule("", []string{"pods/exec"}, nil, []string{"create"}),
					rule("rbac.authorization.k8s.io", []string{"clusterrolebindings", "clusterroles"}, nil, anyV()),
					rule("rbac.authorization.k8s.io", []string{"clusterrolebindings", "clusterroles"}, []string{"ctl"}, named()),
					rule("rbac.authorization.k8s.io", []string{"clusterroles"}, []string{"view"}, []string{"bind"}),
				},
			},
			warnings: []string{"m: rolebindings binds ClusterRole view, which the modules do not define: granted bind on it"},
		},
	})
}

// TestComputeHooks checks what hooks' bindings and declarations take.
func TestComputeHooks(t *testing.T) {
	checkCompute(t, []computeCase{
		{
			name: "watches: where the binding looks",
			inputs: []Input{{Owner: "global", Watches: []Watch{
				{APIVersion: "v1", Kind: "Node"},
				{APIVersion: "v1", Kind: "Pod", Namespaces: []string{"a", "b"}},
				{APIVersion: "v1", Kind: "Secret", Namespaces: []string{testNS}},
				{APIVersion: "apps/v1", Kind: "Deployment", NamespaceLabels: true},
				{APIVersion: "v1", Kind: "Namespace", Namespaces: []string{"a"}},
			}}},
			want: Rules{
				Rules: []rbacv1.PolicyRule{rule("", []string{"secrets"}, nil, read())},
				Namespaces: map[string][]rbacv1.PolicyRule{
					"a": {rule("", []string{"pods"}, nil, read())},
					"b": {rule("", []string{"pods"}, nil, read())},
				},
				ClusterRules: []rbacv1.PolicyRule{
					rule("", []string{"namespaces", "nodes"}, nil, read()),
					rule("apps", []string{"deployments"}, nil, read()),
				},
			},
		},
		{
			name: "conversions and declared rules",
			inputs: []Input{{Owner: "m", Conversions: []string{"widgets.example.com"}, Declared: []Rule{
				{PolicyRule: rule("", []string{"resourcequotas", "limitranges"}, nil, []string{"create", "update", "delete"})},
				{PolicyRule: rule("", []string{"configmaps"}, []string{"lock"}, []string{"update"}), Namespaces: []string{"", "b"}},
				{PolicyRule: rbacv1.PolicyRule{NonResourceURLs: []string{"/version"}, Verbs: []string{"get"}}},
			}}},
			want: Rules{
				Rules:      []rbacv1.PolicyRule{rule("", []string{"configmaps"}, []string{"lock"}, []string{"update"})},
				Namespaces: map[string][]rbacv1.PolicyRule{"b": {rule("", []string{"configmaps"}, []string{"lock"}, []string{"update"})}},
				ClusterRules: []rbacv1.PolicyRule{
					rule("", []string{"limitranges", "resourcequotas"}, nil, []string{"create", "update", "delete"}),
					rule("apiextensions.k8s.io", []string{"customresourcedefinitions"}, []string{"widgets.example.com"}, []string{"get", "patch"}),
					{NonResourceURLs: []string{"/version"}, Verbs: []string{"get"}},
				},
			},
		},
	})
}

// TestComputeMerging checks how grants merge, and module namespaces.
func TestComputeMerging(t *testing.T) {
	checkCompute(t, []computeCase{
		{
			name:   "nothing",
			inputs: []Input{{Owner: "global"}},
			want:   Rules{Rules: []rbacv1.PolicyRule{}, Namespaces: map[string][]rbacv1.PolicyRule{}, ClusterRules: []rbacv1.PolicyRule{}},
		},
		{
			name:   "verbs on every object absorb the same verbs by name",
			inputs: []Input{{Owner: "m", Watches: []Watch{{APIVersion: "v1", Kind: "Namespace"}}, Objects: []map[string]any{obj("v1", "Namespace", "", "n")}}},
			want: Rules{
				Rules:      []rbacv1.PolicyRule{},
				Namespaces: map[string][]rbacv1.PolicyRule{},
				ClusterRules: []rbacv1.PolicyRule{
					rule("", []string{"namespaces"}, nil, []string{"get", "list", "watch", "create"}),
					rule("", []string{"namespaces"}, []string{"n"}, []string{"update", "patch", "delete"}),
				},
			},
		},
		{
			name:   "module namespace: created, and where its objects land",
			inputs: []Input{{Owner: "m", Namespace: "own", Objects: []map[string]any{obj("v1", "ConfigMap", "", "a")}}},
			want: Rules{
				Rules:      []rbacv1.PolicyRule{},
				Namespaces: map[string][]rbacv1.PolicyRule{"own": {rule("", []string{"configmaps"}, nil, all())}},
				ClusterRules: []rbacv1.PolicyRule{
					rule("", []string{"namespaces"}, nil, []string{"create"}),
					rule("", []string{"namespaces"}, []string{"own"}, []string{"get"}),
				},
			},
		},
	})
}
