package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// moduleClient reaches a module's Module object and its configuration:
// what the Flux-like verbs (reconcile, suspend, resume, events, tree,
// history, rollback) read and write.
type moduleClient struct {
	namespace    string
	core         kubernetes.Interface
	dyn          dynamic.Interface
	configMap    string
	configSource string
}

// newVerbCommands returns the Flux-like verbs on modules.
func newVerbCommands() []*cobra.Command {
	return append([]*cobra.Command{newReconcileCommand(), newEventsCommand(), newTreeCommand(), newHistoryCommand(), newRollbackCommand()},
		newSuspendCommands()...)
}

// verbOptions are the flags every Flux-like verb takes.
type verbOptions struct {
	kube         kubeFlags
	output       string
	configMap    string
	configSource string
}

func (o *verbOptions) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.kube.bind(fs)
	o.configMap, o.configSource, o.output = config.DefaultName, configSourceConfigMap, "text"
	fs.StringVar(&o.configMap, "config-map", o.configMap, "the operator's ConfigMap (env ADDON_OPERATOR_CONFIG_MAP)")
	fs.StringVar(&o.configSource, "config-source", o.configSource,
		"the operator's configuration source, where maintenance is set: \"configmap\" or \"moduleconfig\" (env ADDON_OPERATOR_CONFIG_SOURCE)")
	fs.StringVarP(&o.output, "output", "o", o.output, outputUsage())
}

// client checks the flags and returns the clients.
func (o *verbOptions) client(cmd *cobra.Command) (*moduleClient, error) {
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
		return nil, err
	}
	if o.configSource != configSourceConfigMap && o.configSource != configSourceModuleConfig {
		return nil, fmt.Errorf("--config-source must be %q or %q, got %q", configSourceConfigMap, configSourceModuleConfig, o.configSource)
	}
	ns, err := o.kube.operatorNamespace()
	if err != nil {
		return nil, err
	}
	cfg, err := o.kube.restConfig()
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	return &moduleClient{namespace: ns, core: core, dyn: dyn, configMap: o.configMap, configSource: o.configSource}, nil
}

// module reads the Module object of name.
func (c *moduleClient) module(ctx context.Context, name string) (*v1.Module, error) {
	u, err := c.dyn.Resource(v1.ModulesResource()).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("module %q: no Module object (is the module discovered, and does the operator run with --module-objects?): %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("get module %q: %w", name, err)
	}
	var m v1.Module
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
		return nil, fmt.Errorf("decode module %q: %w", name, err)
	}
	return &m, nil
}

// waitModule polls the Module object of name every half second until
// done says it is, or timeout passes.
func (c *moduleClient) waitModule(ctx context.Context, name string, timeout time.Duration, done func(*v1.Module) bool) (*v1.Module, error) {
	var last *v1.Module
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		m, err := c.module(ctx, name)
		if err != nil {
			return false, err
		}
		last = m
		return done(m), nil
	})
	return last, err
}

// outcome is what reconcile, suspend, resume and rollback print.
type outcome struct {
	Module  string `json:"module"`
	Action  string `json:"action"`
	Phase   string `json:"phase,omitempty"`
	Message string `json:"message"`
	// RequestedAt is the reconcile annotation's value (reconcile).
	RequestedAt string `json:"requestedAt,omitempty"`
	// Revision is the release's revision (rollback).
	Revision int `json:"revision,omitempty"`
}

func printOutcome(cmd *cobra.Command, format string, o outcome) error {
	return writeOutput(cmd.OutOrStdout(), format, o, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "module %s: %s\n", o.Module, o.Message)
		return err
	})
}

func newReconcileCommand() *cobra.Command {
	o := &verbOptions{}
	var waitFor bool
	var timeout time.Duration
	cmd := &cobra.Command{Use: "reconcile", Short: "Ask the operator to run a module now, as flux reconcile does"}
	sub := &cobra.Command{
		Use:   "module NAME",
		Short: "Run a module now, ending its backoff, and wait for the run",
		Long: `Set the Module object's addon-operator.io/reconcile-requested-at annotation
to the current time. The operator sees it at once, runs the module (a
failing module's backoff ends) and, when the run ended, writes the value to
status.lastHandledReconcileAt. With --wait (the default) the command waits
for that and prints how the run ended; it exits 1 when the run failed, and
when --timeout passes first. A disabled module has nothing to run: the
request is handled at once. Needs "patch" on modules.addon-operator.io.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			return c.reconcile(cmd, args[0], waitFor, timeout, o.output)
		},
	}
	o.bind(sub)
	sub.Flags().BoolVar(&waitFor, "wait", true, "wait for the run the request asks for, and print how it ended")
	sub.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long --wait waits")
	cmd.AddCommand(sub)
	return cmd
}

func (c *moduleClient) reconcile(cmd *cobra.Command, name string, waitFor bool, timeout time.Duration, format string) error {
	ctx := cmd.Context()
	if _, err := c.module(ctx, name); err != nil {
		return err
	}
	value := time.Now().UTC().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1.ReconcileRequestAnnotation: value}}})
	if err != nil {
		return err
	}
	if _, err := c.dyn.Resource(v1.ModulesResource()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("request a reconcile of module %q: %w", name, err)
	}
	out := outcome{Module: name, Action: "reconcile", RequestedAt: value, Message: "reconcile requested"}
	if !waitFor {
		return printOutcome(cmd, format, out)
	}
	m, err := c.waitModule(ctx, name, timeout, func(m *v1.Module) bool { return m.Status.LastHandledReconcileAt == value })
	if err != nil {
		return fmt.Errorf("module %q: the operator did not handle the reconcile request within %s (is it running?): %w", name, timeout, err)
	}
	out.Phase = m.Status.Phase
	switch {
	case m.Status.Phase == v1.PhaseFailed || m.Status.LastError != "":
		out.Message = "run failed: " + m.Status.LastError
		if err := printOutcome(cmd, format, out); err != nil {
			return err
		}
		cmd.SilenceErrors = true
		return &exitError{code: 1}
	case !m.Status.Enabled:
		out.Message = "disabled: nothing to run"
	default:
		out.Message = "reconciled: phase " + m.Status.Phase
		if m.Status.LastRunDuration != nil {
			out.Message += ", last run took " + m.Status.LastRunDuration.Duration.String()
		}
	}
	return printOutcome(cmd, format, out)
}

func newSuspendCommands() []*cobra.Command {
	return []*cobra.Command{
		suspendCommand("suspend", true, "Put a module in maintenance: its release is neither upgraded, nor healed, nor reverted"),
		suspendCommand("resume", false, "End a module's maintenance: the operator runs it at once and upgrades its release"),
	}
}

func suspendCommand(verb string, on bool, short string) *cobra.Command {
	o := &verbOptions{}
	cmd := &cobra.Command{Use: verb, Short: short}
	sub := &cobra.Command{
		Use:   "module NAME",
		Short: short,
		Long: short + `.

It writes the module's maintenance where the operator's configuration
source keeps it, as a person editing it would: the ConfigMap's
<moduleKey>Maintenance key (NoResourceReconciliation, or removed), or,
with --config-source=moduleconfig, the ModuleConfig's spec.maintenance.
Needs "patch" on that ConfigMap or ModuleConfig (docs/security.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			if err := c.setMaintenance(cmd.Context(), args[0], on); err != nil {
				return err
			}
			msg := "suspended: in maintenance, its release is left as it is"
			if !on {
				msg = "resumed: the operator runs it now and upgrades its release to the desired state"
			}
			return printOutcome(cmd, o.output, outcome{Module: args[0], Action: verb, Message: msg})
		},
	}
	o.bind(sub)
	cmd.AddCommand(sub)
	return cmd
}

// setMaintenance writes a module's maintenance to the configuration
// source: the ConfigMap's key (set, or removed) or the ModuleConfig's
// spec.maintenance. It never creates the ConfigMap.
func (c *moduleClient) setMaintenance(ctx context.Context, name string, on bool) error {
	if !module.ValidName(name) {
		return fmt.Errorf("%q is no module name", name)
	}
	var value any // nil removes it
	if on {
		value = config.MaintenanceNoResourceReconciliation
	}
	if c.configSource == configSourceModuleConfig {
		return c.setModuleConfigMaintenance(ctx, name, value)
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]any{config.MaintenanceKey(module.KeyFor(name)): value}})
	if err != nil {
		return err
	}
	_, err = c.core.CoreV1().ConfigMaps(c.namespace).Patch(ctx, c.configMap, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set the maintenance of module %q in ConfigMap %s/%s: %w", name, c.namespace, c.configMap, err)
	}
	return nil
}

// setModuleConfigMaintenance sets a ModuleConfig's spec.maintenance, and
// creates the object with only that when there is none.
func (c *moduleClient) setModuleConfigMaintenance(ctx context.Context, name string, value any) error {
	res := c.dyn.Resource(v1.ModuleConfigsResource())
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"maintenance": value}})
	if err != nil {
		return err
	}
	_, err = res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) && value != nil {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1.APIVersion, "kind": "ModuleConfig",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"maintenance": value},
		}}
		_, err = res.Create(ctx, obj, metav1.CreateOptions{})
	}
	if err != nil && (!apierrors.IsNotFound(err) || value != nil) {
		return fmt.Errorf("set the maintenance of module %q in its ModuleConfig: %w", name, err)
	}
	return nil
}

// errNotSuspended is rollback's refusal for a module not in maintenance.
var errNotSuspended = errors.New("module not suspended")
