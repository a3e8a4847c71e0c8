package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/kubeversion"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// treeOptions say where the modules and global hooks are, which ConfigMap
// to take and which values to layer over them: what plan, lint and diff
// read.
type treeOptions struct {
	operator   options.Options
	configFile string
	valueFiles []string
	sets       []string
	// liveData is the ConfigMap read from the cluster, used when
	// configFile is empty; nil is no ConfigMap.
	liveData map[string]string
}

func newTreeOptions() *treeOptions { return &treeOptions{operator: options.Default()} }

func (o *treeOptions) bind(fs *pflag.FlagSet) {
	o.operator.Discovery.BindFlags(fs)
	fs.StringVar(&o.configFile, "config", "", "a ConfigMap manifest (YAML or JSON) to take as the operator's ConfigMap; - reads stdin")
}

// bindOverrides adds --values and --set.
func (o *treeOptions) bindOverrides(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.valueFiles, "values", "f", nil, "a YAML file of {global: ..., <moduleKey>: ..., <moduleKey>Enabled: ...} layered over the values "+
		"as hook patches would be (what global hooks set or enable); repeatable, - reads stdin")
	fs.StringArrayVar(&o.sets, "set", nil, "a value layered like --values, in Helm's syntax: global.domain=x, echoServiceEnabled=true, web.replicas=3; repeatable")
}

// overrides reads --values files and --set arguments, later ones winning.
func (o *treeOptions) overrides(stdin io.Reader) (values.Values, error) {
	layers := []values.Values{}
	for _, f := range o.valueFiles {
		raw, err := readInput(f, stdin)
		if err != nil {
			return nil, fmt.Errorf("--values %s: %w", f, err)
		}
		v, err := values.FromYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("--values %s: %w", f, err)
		}
		layers = append(layers, v)
	}
	set := map[string]any{}
	for _, s := range o.sets {
		if err := helm.ParseSet(s, set); err != nil {
			return nil, err
		}
	}
	return values.Merge(append(layers, values.Values(set))...), nil
}

// offline applies the environment and builds the plan of the tree.
func (o *treeOptions) offline(cmd *cobra.Command) (*plan.Offline, error) {
	if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
		return nil, err
	}
	data, err := readConfigData(o.configFile, cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	if o.configFile == "" {
		data = o.liveData
	}
	var cfg *config.Config
	if data != nil {
		if cfg, err = config.Parse(data); err != nil {
			return nil, fmt.Errorf("--config %s: %w", o.configFile, err)
		}
	}
	log := newWarnLogger(cmd.ErrOrStderr())
	x, err := plan.NewOffline(o.operator.Discovery.Options(log), o.operator.Namespace, cfg, &hook.Executor{Logger: log})
	if err != nil {
		return nil, err
	}
	over, err := o.overrides(cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	if err := x.Override(over); err != nil {
		return nil, err
	}
	return x, nil
}

// readInput reads a file, or stdin for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// readConfigData returns the data of a ConfigMap manifest; nil without a
// path (no ConfigMap).
func readConfigData(path string, stdin io.Reader) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := readInput(path, stdin)
	if err != nil {
		return nil, fmt.Errorf("read --config: %w", err)
	}
	var cm struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, fmt.Errorf("--config %s: kind is %q, want ConfigMap", path, cm.Kind)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	return cm.Data, nil
}

// planOptions are the flags of the plan commands.
type planOptions struct {
	tree   *treeOptions
	output string
	render plan.RenderOptions
}

func newModulesCommand() *cobra.Command {
	o := &planOptions{tree: newTreeOptions(), output: "text"}
	cmd := &cobra.Command{
		Use:     "plan",
		Aliases: []string{"modules"},
		Short:   "Plan and review modules offline: enabled state, values, hooks, rendered manifests",
		Long: `Answer what the operator would do with the modules on disk and a ConfigMap,
without a cluster. Enabled scripts run (they decide enabled state); other
hooks run only with --config (plan hooks), so values are shown without hook
patches: --values and --set stand in for them.`,
	}
	fs := cmd.PersistentFlags()
	o.tree.bind(fs)
	o.tree.bindOverrides(fs)
	fs.StringVarP(&o.tree.operator.Namespace, "namespace", "n", "", namespaceUsage(`charts render into it; default "default"`))
	fs.StringVarP(&o.output, "output", "o", o.output, outputUsage())
	cmd.AddCommand(o.listCommand(), o.valuesCommand(), o.renderCommand(), o.hooksCommand())
	return cmd
}

func (o *planOptions) offline(cmd *cobra.Command) (*plan.Offline, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	return o.tree.offline(cmd)
}

func (o *planOptions) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List modules with their order, enabled state and what decided it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			x, err := o.offline(cmd)
			if err != nil {
				return err
			}
			list, err := x.List(cmd.Context())
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), o.output, list, func(w io.Writer) error { return printModules(w, list) })
		},
	}
}

func (o *planOptions) valuesCommand() *cobra.Command {
	explain := false
	cmd := &cobra.Command{
		Use:   "values NAME",
		Short: "Print a module's effective values (without hook patches); NAME global for global values",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := o.offline(cmd)
			if err != nil {
				return err
			}
			if explain {
				leaves, err := x.Explain(args[0])
				if err != nil {
					return err
				}
				return writeOutput(cmd.OutOrStdout(), o.output, leaves, func(w io.Writer) error { return printLeaves(w, leaves) })
			}
			v, err := x.Values(args[0])
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), yamlByDefault(o.output), v, nil)
		},
	}
	cmd.Flags().BoolVar(&explain, "explain", false, "for every leaf value, name the layer that set it")
	return cmd
}

// yamlByDefault prints values as YAML unless JSON is asked for.
func yamlByDefault(format string) string {
	if format == "text" {
		return "yaml"
	}
	return format
}

func (o *planOptions) renderCommand() *cobra.Command {
	var cluster kubeFlags // only to ask the cluster's version
	cmd := &cobra.Command{
		Use:   "render NAME",
		Short: "Print the manifests Helm would apply for a module, as helm template does",
		Long: `Print the manifests Helm would apply for a module, chart hooks after them.
Text and YAML print the manifest as Helm renders it; JSON prints a v1 List of
the objects. Objects whose API version --kube-version no longer serves are
warned about on stderr. Without --kube-version, charts render for the version
of the cluster of the kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config)
when its API server answers within ` + clusterVersionTimeout.String() + `, else for the
Kubernetes version of the client libraries this binary is built with.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := o.offline(cmd)
			if err != nil {
				return err
			}
			if o.render.Capabilities.KubeVersion == "" {
				o.render.Capabilities.KubeVersion = clusterKubeVersion(cmd.ErrOrStderr(), cluster)
			}
			r, err := x.RenderWith(cmd.Context(), args[0], o.render)
			if err != nil {
				return err
			}
			for _, w := range r.Warnings {
				warnf(cmd.ErrOrStderr(), "%s", w)
			}
			docs := append([]string{r.Manifest}, r.Hooks...)
			if o.output == "text" || o.output == "yaml" {
				_, err = io.WriteString(cmd.OutOrStdout(), strings.Join(docs, "\n---\n"))
				return err
			}
			list, err := objectList(docs)
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), o.output, list, nil)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.render.Capabilities.KubeVersion, "kube-version", "",
		"Kubernetes version for .Capabilities.KubeVersion (default: the cluster's, else "+kubeversion.Default()+")")
	cluster.bindCluster(fs)
	fs.StringSliceVarP(&o.render.Capabilities.APIVersions, "api-versions", "a", nil, "API versions added to .Capabilities.APIVersions, e.g. monitoring.coreos.com/v1")
	fs.BoolVar(&o.render.Capabilities.IncludeCRDs, "include-crds", false, "include the chart's crds/ in the output")
	fs.StringArrayVarP(&o.render.ShowOnly, "show-only", "s", nil, "only the documents of this template, e.g. templates/deployment.yaml; repeatable")
	return cmd
}

// clusterVersionTimeout bounds plan render's question for the cluster's
// version.
const clusterVersionTimeout = 5 * time.Second

// clusterKubeVersion returns the Kubernetes version of the cluster of the
// kubeconfig k loads, "" when none loads or its API server does not
// answer (which is warned about on w).
func clusterKubeVersion(w io.Writer, k kubeFlags) string {
	cfg, err := k.restConfig()
	if err != nil {
		return "" // no kubeconfig: offline
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = clusterVersionTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err == nil {
		var v *apiversion.Info
		if v, err = dc.ServerVersion(); err == nil {
			return v.GitVersion
		}
	}
	warnf(w, "the cluster's version is unknown (%v): rendering for Kubernetes %s", err, kubeversion.Default())
	return ""
}

// objectList returns the objects of manifests as one v1 List.
func objectList(manifests []string) (map[string]any, error) {
	items := []any{}
	for _, m := range manifests {
		objs, err := kube.ManifestObjects(m)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			items = append(items, obj)
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, nil
}

func (o *planOptions) hooksCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hooks",
		Short: "List global and module hooks with their bindings, in the order they run",
		Long: `Run every hook with --config, as the operator does at startup, and list
their bindings: lifecycle bindings in the order hooks run (ascending ORDER,
ties by path), then kubernetes and schedule bindings.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			x, err := o.offline(cmd)
			if err != nil {
				return err
			}
			hooks, err := x.Hooks(cmd.Context(), &hook.Executor{Logger: newWarnLogger(cmd.ErrOrStderr())})
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), o.output, hooks, func(w io.Writer) error { return printHooks(w, hooks) })
		},
	}
}

func printHooks(w io.Writer, hooks []plan.HookBinding) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OWNER\tHOOK\tBINDING\tORDER\tNAME\tDETAIL")
	for _, h := range hooks {
		order := ""
		if h.Order != nil {
			order = fmt.Sprint(*h.Order)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Owner, h.Hook, h.Binding, order, h.Name, h.Detail)
	}
	return tw.Flush()
}

func printModules(w io.Writer, list []plan.ModuleInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// Deckhouse's module.yaml fields get columns of their own when some
	// module has them, or when some module cannot run.
	deckhouse := slices.ContainsFunc(list, func(m plan.ModuleInfo) bool {
		return m.Critical || m.Stage != "" || m.ExclusiveGroup != "" || len(m.Tags)+len(m.Subsystems)+len(m.Warnings) > 0 || m.Error != ""
	})
	head := "NAME\tORDER\tENABLED\tDECIDED BY\tHELM\tNAMESPACE\tVERSION\tREQUIRES\tREASON\tDESCRIPTION"
	if deckhouse {
		head += "\tCRITICAL\tSTAGE\tGROUP\tTAGS\tPROBLEM"
	}
	fmt.Fprintln(tw, head)
	for i := range list {
		m := &list[i]
		fmt.Fprintf(tw, "%s\t%d\t%t\t%s\t%t\t%s\t%s\t%s\t%s\t%s", m.Name, m.Order, m.Enabled, m.By, m.Helm, m.Namespace, m.Version,
			strings.Join(m.Requires, ","), m.Reason, m.Description)
		if deckhouse {
			fmt.Fprintf(tw, "\t%t\t%s\t%s\t%s\t%s", m.Critical, m.Stage, m.ExclusiveGroup,
				strings.Join(slices.Concat(m.Subsystems, m.Tags), ","), moduleProblem(m))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// moduleProblem says why a module would not run, else what was ignored
// in its module.yaml.
func moduleProblem(m *plan.ModuleInfo) string {
	if m.Error != "" {
		return m.Error
	}
	return strings.Join(m.Warnings, "; ")
}

func printLeaves(w io.Writer, leaves []store.Leaf) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tVALUE\tSET BY")
	for _, l := range leaves {
		v, err := json.Marshal(l.Value)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Path, v, l.Source)
	}
	return tw.Flush()
}
