package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/config"
)

// migrateFieldManager owns the spec fields the migration writes.
const migrateFieldManager = "addon-operator-migrate"

// migrateOptions are the flags of config migrate.
type migrateOptions struct {
	kube      kubeFlags
	configMap string
	dryRun    bool
	output    string
}

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Manage the operator's configuration source"}
	o := &migrateOptions{configMap: config.DefaultName, output: "text"}
	migrate := &cobra.Command{
		Use:   "migrate",
		Short: "Write ModuleConfig objects that configure what the ConfigMap configures",
		Long: `Read the operator's ConfigMap and write one ModuleConfig object per module it
configures (spec.settings from the module's key, spec.enabled from its
<moduleKey>Enabled key) and one named "global" for the global key. Objects
that exist are updated by server-side apply; other objects are not touched.
With --dry-run the objects are printed (as YAML unless -o says otherwise)
and nothing is written.
Then start the operator with --config-source=moduleconfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			if err := checkOutput(o.output); err != nil {
				return err
			}
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	fs := migrate.Flags()
	o.kube.bind(fs)
	fs.StringVar(&o.configMap, "config-map", o.configMap, "name of the ConfigMap (env ADDON_OPERATOR_CONFIG_MAP)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the objects, write nothing")
	fs.StringVarP(&o.output, "output", "o", o.output, outputUsage())
	cmd.AddCommand(migrate)
	return cmd
}

func (o *migrateOptions) run(ctx context.Context, out io.Writer) error {
	namespace, err := o.kube.operatorNamespace()
	if err != nil {
		return err
	}
	restCfg, err := o.kube.restConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	c, err := config.NewSource(client, namespace, o.configMap, nil).Load(ctx)
	if err != nil {
		return err
	}
	var objs []map[string]any
	mcs := config.ToModuleConfigs(c)
	for i := range mcs {
		mc := &mcs[i]
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mc)
		if err != nil {
			return fmt.Errorf("encode moduleconfig %s: %w", mc.Name, err)
		}
		delete(u["metadata"].(map[string]any), "creationTimestamp")
		delete(u, "status")
		objs = append(objs, u)
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objs}
	if o.dryRun && o.output != "text" {
		return writeOutput(out, o.output, list, nil)
	}
	if o.dryRun {
		for _, u := range objs {
			b, err := yaml.Marshal(u)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "---\n%s", b)
		}
		return nil
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	res := dyn.Resource(v1.ModuleConfigsResource())
	for _, u := range objs {
		obj := &unstructured.Unstructured{Object: u}
		if _, err := res.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: migrateFieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply moduleconfig %s: %w", obj.GetName(), err)
		}
		if o.output == "text" {
			fmt.Fprintf(out, "moduleconfig/%s applied\n", obj.GetName())
		}
	}
	if o.output != "text" {
		return writeOutput(out, o.output, list, nil)
	}
	fmt.Fprintf(out, "%d ModuleConfig objects written from configmap %s/%s\n", len(objs), namespace, o.configMap)
	return nil
}
