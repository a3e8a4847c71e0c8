package main

import (
	"strings"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/rbac"
)

// releaseNamespace stands for the chart's release namespace when rbac is
// given no --namespace: charts render into it, and names that carry it are
// printed with {{ .Release.Namespace }} in its place, which the chart
// fills in.
const (
	releaseNamespace         = "addon-operator-release-namespace"
	releaseNamespaceTemplate = "{{ .Release.Namespace }}"
)

func newRBACCommand() *cobra.Command {
	tree := newTreeOptions()
	output := "values"
	var access plan.AccessOptions
	cmd := &cobra.Command{
		Use:   "rbac",
		Short: "Compute the RBAC rules a module set needs, as the chart's rbac.generated value",
		Long: `Compute the Kubernetes RBAC rules the operator needs for the modules and
global hooks on disk, offline:

  charts   every object each chart renders (CRDs and chart hooks included):
           every verb on its kind in its namespace; for a cluster-scoped
           kind create, list and watch, and get, update, patch and delete on
           the rendered names only. Roles and ClusterRoles add the rules they
           grant (the API server lets only a holder create them); bindings
           to roles the modules do not define add bind on those roles.
  hooks    get, list and watch on what kubernetes bindings watch, in the
           namespaces of namespace.nameSelector, else cluster-wide; get and
           patch on the CRDs of conversion bindings, by name.
  declared the rules of each module.yaml's rbac list: what hooks write
           through object patches, which cannot be read from a hook.

Modules covered: those the values, --config, --values and --set do not
switch off (an enabled script is taken to say yes), or every one with
--all. Hooks run with --config only; charts render with their values and
the ConfigMap of --config. Without --namespace, charts render into the
release namespace, written {{ .Release.Namespace }} where a name carries it.

Output: values or text (the chart's rbac.generated, to pass with -f), yaml,
json, name or jsonpath=<expr> (the rules alone). What the operator needs for itself (its ConfigMap, Helm
release Secrets, Events, Lease, webhook configurations, Module objects) the
chart grants apart. Warnings (kinds taken as namespaced, bindings to roles
the modules do not define) go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "values"); err != nil {
				return err
			}
			if !cmd.Flags().Changed("namespace") {
				tree.operator.Namespace = releaseNamespace // unless the environment names one
			}
			x, err := tree.offline(cmd)
			if err != nil {
				return err
			}
			ns := tree.operator.Namespace
			inputs, err := x.Access(cmd.Context(), &hook.Executor{Logger: newWarnLogger(cmd.ErrOrStderr())}, access)
			if err != nil {
				return err
			}
			rules, warnings := rbac.Compute(ns, inputs)
			for _, w := range warnings {
				warnf(cmd.ErrOrStderr(), "%s", w)
			}
			if ns == releaseNamespace {
				templateNamespace(&rules)
			}
			if output == "values" || output == "text" {
				return writeOutput(cmd.OutOrStdout(), "yaml", map[string]any{"rbac": map[string]any{"generated": rules}}, nil)
			}
			return writeOutput(cmd.OutOrStdout(), output, rules, nil)
		},
	}
	fs := cmd.Flags()
	tree.bind(fs)
	tree.bindOverrides(fs)
	fs.StringVarP(&tree.operator.Namespace, "namespace", "n", "", namespaceUsage("charts render into it; default: the chart's release namespace"))
	fs.BoolVar(&access.All, "all", false, "cover every module on disk, also those switched off")
	fs.StringVar(&access.Capabilities.KubeVersion, "kube-version", "", "Kubernetes version charts render for")
	fs.StringSliceVarP(&access.Capabilities.APIVersions, "api-versions", "a", nil, "API versions added to .Capabilities.APIVersions, e.g. monitoring.coreos.com/v1")
	fs.StringVarP(&output, "output", "o", output, outputUsage("values (the default; text is the same)"))
	return cmd
}

// templateNamespace writes the release namespace placeholder in names as
// the chart's template for it.
func templateNamespace(r *rbac.Rules) {
	fix := func(rules []rbacv1.PolicyRule) {
		for i := range rules {
			for j, n := range rules[i].ResourceNames {
				rules[i].ResourceNames[j] = strings.ReplaceAll(n, releaseNamespace, releaseNamespaceTemplate)
			}
		}
	}
	fix(r.Rules)
	fix(r.ClusterRules)
	for _, rules := range r.Namespaces {
		fix(rules)
	}
}
