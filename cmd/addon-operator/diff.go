package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/server"
)

// Module changes a diff reports.
const (
	changeEnable  = "enable"  // enabled, no release yet: installed
	changeDisable = "disable" // disabled, its release exists: uninstalled
	changeRemove  = "remove"  // no module on disk, its release exists: purged
)

// moduleChange is how one module would change.
type moduleChange struct {
	Module string `json:"module"`
	// Change is changeEnable, changeDisable, changeRemove or "" (the
	// module stays as it is; its objects may change).
	Change  string              `json:"change,omitempty"`
	Reason  string              `json:"reason,omitempty"`
	Objects []server.ObjectDiff `json:"objects,omitempty"`
}

// changed reports whether applying would change anything.
func (c moduleChange) changed() bool {
	return c.Change != "" || slices.ContainsFunc(c.Objects, func(d server.ObjectDiff) bool { return d.Action != server.ActionNone })
}

type diffOptions struct {
	tree      *treeOptions
	kube      kubeFlags
	configMap string
	output    string
}

func newDiffCommand() *cobra.Command {
	o := &diffOptions{tree: newTreeOptions(), configMap: config.DefaultName, output: "text"}
	cmd := &cobra.Command{
		Use:   "diff [MODULE...]",
		Short: "Show what the operator would change in the cluster for the modules on disk",
		Long: `Compare the working tree (modules, global hooks, and the ConfigMap of --config
or else the live one) with what is deployed: per module, the objects to
create, update (with a unified diff) and delete, and the modules to enable,
disable or remove. Charts render against the cluster, with values as
"plan values" computes them: hooks do not run, so values hooks set are
missing unless given with --values or --set. MODULE arguments limit the
report to those modules.

Exit code, as kubectl diff: 0 nothing would change, 1 something would,
2 the comparison failed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			changes, err := o.run(cmd, args)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if err := writeOutput(cmd.OutOrStdout(), o.output, changes, func(w io.Writer) error { return printChanges(w, changes) }); err != nil {
				return &exitError{code: 2, err: err}
			}
			if slices.ContainsFunc(changes, moduleChange.changed) {
				cmd.SilenceErrors = true
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	o.tree.bind(fs)
	o.tree.bindOverrides(fs)
	o.kube.bind(fs)
	fs.StringVar(&o.configMap, "config-map", o.configMap, "the operator's ConfigMap, read when --config is not given (env ADDON_OPERATOR_CONFIG_MAP)")
	fs.StringVarP(&o.output, "output", "o", o.output, outputUsage())
	return cmd
}

func (o *diffOptions) run(cmd *cobra.Command, only []string) ([]moduleChange, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	view, err := o.kube.view(newWarnLogger(cmd.ErrOrStderr()))
	if err != nil {
		return nil, err
	}
	if o.tree.configFile == "" {
		if err := o.liveConfig(ctx, view); err != nil {
			return nil, err
		}
	}
	o.tree.operator.Namespace = view.namespace
	x, err := o.tree.offline(cmd)
	if err != nil {
		return nil, err
	}
	return o.changes(ctx, x, view, only)
}

// liveConfig takes the cluster's ConfigMap as --config; none is empty.
func (o *diffOptions) liveConfig(ctx context.Context, view *clusterView) error {
	cm, err := view.core.CoreV1().ConfigMaps(view.namespace).Get(ctx, o.configMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		o.tree.liveData = map[string]string{}
	case err != nil:
		return fmt.Errorf("read ConfigMap %s/%s: %w", view.namespace, o.configMap, err)
	default:
		o.tree.liveData = cm.Data
		if o.tree.liveData == nil {
			o.tree.liveData = map[string]string{}
		}
	}
	return nil
}

// changes compares every module's plan with its release.
func (o *diffOptions) changes(ctx context.Context, x *plan.Offline, view *clusterView, only []string) ([]moduleChange, error) {
	owned, err := view.releases.Owned(ctx)
	if err != nil {
		return nil, err
	}
	list, err := x.List(ctx)
	if err != nil {
		return nil, err
	}
	wanted := func(name string) bool { return len(only) == 0 || slices.Contains(only, name) }
	var out []moduleChange
	known := map[string]bool{}
	for i := range list {
		m := &list[i]
		known[m.Name] = true
		if !wanted(m.Name) || !m.Helm {
			continue
		}
		c, err := o.moduleChange(ctx, x, view, m, slices.Contains(owned, m.Name))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for _, name := range owned {
		if known[name] || !wanted(name) {
			continue
		}
		objs, err := view.moduleDiff(ctx, name, "")
		if err != nil {
			return nil, err
		}
		out = append(out, moduleChange{Module: name, Change: changeRemove, Reason: "no module on disk", Objects: objs})
	}
	return out, nil
}

func (o *diffOptions) moduleChange(ctx context.Context, x *plan.Offline, view *clusterView, m *plan.ModuleInfo, hasRelease bool) (moduleChange, error) {
	c := moduleChange{Module: m.Name, Reason: m.Reason}
	manifest := ""
	if m.Enabled {
		v, err := x.Values(m.Name)
		if err != nil {
			return c, err
		}
		r, err := view.releases.Render(ctx, helm.Release{Name: m.Name, ChartDir: m.Path, Values: map[string]any(v)})
		if err != nil {
			return c, fmt.Errorf("module %s (%s): %w", m.Name, m.Path, err)
		}
		manifest = r.Manifest
	}
	switch {
	case m.Enabled && !hasRelease:
		c.Change = changeEnable
	case !m.Enabled && hasRelease:
		c.Change = changeDisable
	case !m.Enabled:
		return c, nil // disabled, nothing deployed
	}
	objs, err := view.moduleDiff(ctx, m.Name, manifest)
	c.Objects = objs
	return c, err
}

// printChanges prints each module that would change, its objects'
// verdicts and diffs, then a summary.
func printChanges(w io.Writer, changes []moduleChange) error {
	headings := map[string]string{changeEnable: "to be enabled", changeDisable: "to be disabled", changeRemove: "to be removed"}
	var all []server.ObjectDiff
	modules := map[string]int{}
	for _, c := range changes {
		all = append(all, c.Objects...)
		modules[c.Change]++
		if !c.changed() {
			continue
		}
		heading := "changes"
		if c.Change != "" {
			heading = headings[c.Change]
		}
		if _, err := fmt.Fprintf(w, "module %s: %s (%s)\n", c.Module, heading, c.Reason); err != nil {
			return err
		}
		for _, d := range c.Objects {
			if d.Action == server.ActionNone {
				continue
			}
			if err := printDiff(w, d); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "modules: %d to enable, %d to disable, %d to remove; objects: %s\n",
		modules[changeEnable], modules[changeDisable], modules[changeRemove], diffSummary(all))
	return err
}
