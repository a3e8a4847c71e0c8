package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/store"
)

// modulesOptions are the flags of the offline modules commands.
type modulesOptions struct {
	operator   operator.Options
	configFile string
	output     string
}

func newModulesCommand() *cobra.Command {
	o := &modulesOptions{operator: operator.DefaultOptions(), output: "text"}
	cmd := &cobra.Command{
		Use:   "modules",
		Short: "Plan and review modules offline: enabled state, values, rendered manifests",
		Long: `Answer what the operator would do with the modules on disk and a ConfigMap,
without a cluster. Enabled scripts run (they decide enabled state); hooks do
not, so values are shown without hook patches.`,
	}
	fs := cmd.PersistentFlags()
	fs.StringVar(&o.operator.ModulesDirs, "modules-dir", o.operator.ModulesDirs, "directories with modules, separated by ':' (env ADDON_OPERATOR_MODULES_DIR, MODULES_DIR)")
	fs.StringVar(&o.operator.GlobalHooksDir, "global-hooks-dir", o.operator.GlobalHooksDir, "directory with global hooks and their openapi/ schemas (env ADDON_OPERATOR_GLOBAL_HOOKS_DIR, GLOBAL_HOOKS_DIR)")
	fs.IntVar(&o.operator.UnnumberedModulesOrder, "unnumbered-modules-order", o.operator.UnnumberedModulesOrder, "order of modules whose directory has no NNN- prefix (env ADDON_OPERATOR_UNNUMBERED_MODULES_ORDER, UNNUMBERED_MODULES_ORDER)")
	fs.StringVar(&o.configFile, "config", "", "a ConfigMap manifest (YAML or JSON) to take as the operator's ConfigMap")
	fs.StringVarP(&o.output, "output", "o", o.output, "output format: text, json or yaml")

	explain := false
	values := &cobra.Command{
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
			return writeOutput(cmd.OutOrStdout(), o.output, v, nil)
		},
	}
	values.Flags().BoolVar(&explain, "explain", false, "for every leaf value, name the layer that set it")
	cmd.AddCommand(&cobra.Command{
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
	}, values, &cobra.Command{
		Use:   "render NAME",
		Short: "Print the manifests Helm would apply for a module (Helm's default capabilities)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			x, err := o.offline(cmd)
			if err != nil {
				return err
			}
			r, err := x.Render(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			doc := struct {
				Manifest string   `json:"manifest"`
				Hooks    []string `json:"hooks,omitempty"`
				Checksum string   `json:"checksum"`
			}{r.Manifest, r.Hooks, r.Checksum}
			return writeOutput(cmd.OutOrStdout(), o.output, doc, func(w io.Writer) error {
				_, err := io.WriteString(w, strings.Join(append([]string{r.Manifest}, r.Hooks...), "\n---\n"))
				return err
			})
		},
	})
	return cmd
}

func (o *modulesOptions) offline(cmd *cobra.Command) (*plan.Offline, error) {
	if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
		return nil, err
	}
	switch o.output {
	case "text", "json", "yaml":
	default:
		return nil, fmt.Errorf("--output %q: want text, json or yaml", o.output)
	}
	cfg, err := readConfigManifest(o.configFile)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	return plan.NewOffline(o.operator.Discovery(log), o.operator.Namespace, cfg, &hook.Executor{Logger: log})
}

// readConfigManifest parses a ConfigMap manifest into the operator's view.
func readConfigManifest(path string) (*config.Config, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
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
	cfg, err := config.Parse(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	return cfg, nil
}

func printModules(w io.Writer, list []plan.ModuleInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tORDER\tENABLED\tDECIDED BY\tHELM\tNAMESPACE\tVERSION\tREQUIRES\tDESCRIPTION")
	for i := range list {
		m := &list[i]
		desc := m.Description
		if m.Reason != "" { // why it is disabled matters more here
			desc = m.Reason
		}
		fmt.Fprintf(tw, "%s\t%d\t%t\t%s\t%t\t%s\t%s\t%s\t%s\n", m.Name, m.Order, m.Enabled, m.By, m.Helm, m.Namespace, m.Version,
			strings.Join(m.Requires, ","), desc)
	}
	return tw.Flush()
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
