package rbac

import rbacv1 "k8s.io/api/rbac/v1"

// Input is what one owner (a module, or the global hooks) brings.
type Input struct {
	// Owner names the module or "global", for warnings.
	Owner string
	// Namespace is where its namespace-less objects land, created when
	// missing (module.yaml's namespace); "" is the release namespace.
	Namespace string
	// Objects are the objects its chart renders, chart hooks included; a
	// namespaced object without a namespace lands in Namespace.
	Objects []map[string]any
	// CRDs are the CRDs of its crds/ directory, which the operator applies
	// server-side by name before the chart.
	CRDs []map[string]any
	// Watches are its hooks' kubernetes bindings.
	Watches []Watch
	// Conversions name the CRDs its hooks' conversion bindings convert.
	Conversions []string
	// Declared are the rules its module.yaml declares for its hooks'
	// object patches.
	Declared []Rule
}

// Watch is one kubernetes binding: the kind it watches and where.
type Watch struct {
	APIVersion string
	// Kind is a kind or a plural resource name, as in the binding.
	Kind string
	// Namespaces are the namespaces named by namespace.nameSelector; empty
	// means every namespace (or, for a cluster-scoped kind, none).
	Namespaces []string
	// NamespaceLabels is true when namespace.labelSelector picks the
	// namespaces: the namespaces are then listed and watched too, and the
	// kind is watched in every namespace.
	NamespaceLabels bool
}

// Rule is a declared rule: a PolicyRule granted in Namespaces, or
// cluster-wide when there are none.
type Rule struct {
	rbacv1.PolicyRule `json:",inline"`
	// Namespaces limit the rule to these namespaces; "" stands for the
	// release namespace.
	Namespaces []string `json:"namespaces,omitempty"`
}
