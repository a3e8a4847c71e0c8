package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
)

// Values of --config-source.
const (
	configSourceConfigMap    = "configmap"
	configSourceModuleConfig = "moduleconfig"
)

// apiOptions are the flags of the addon-operator.io API: Module objects
// and the configuration source.
type apiOptions struct {
	moduleObjects bool
	configSource  string
}

func newAPIOptions() apiOptions {
	return apiOptions{moduleObjects: true, configSource: configSourceConfigMap}
}

func (o *apiOptions) bindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.moduleObjects, "module-objects", o.moduleObjects,
		"show every module as a cluster-scoped Module object (addon-operator.io/v1alpha1) with its phase and conditions; "+
			"without the CRD or the rights the operator runs on and says so once (env ADDON_OPERATOR_MODULE_OBJECTS)")
	fs.StringVar(&o.configSource, "config-source", o.configSource,
		"where modules' settings and Enabled switches come from: \"configmap\" (the ConfigMap of --config-map) or "+
			"\"moduleconfig\" (ModuleConfig objects, addon-operator.io/v1alpha1; \"global\" holds the global settings) "+
			"(env ADDON_OPERATOR_CONFIG_SOURCE)")
}

func (o *apiOptions) validate() error {
	if o.configSource != configSourceConfigMap && o.configSource != configSourceModuleConfig {
		return fmt.Errorf("--config-source must be %q or %q, got %q", configSourceConfigMap, configSourceModuleConfig, o.configSource)
	}
	return nil
}

// moduleObjectWriter returns the Module objects' writer, nil when they
// are off.
func (o *apiOptions) moduleObjectWriter(dyn dynamic.Interface, namespace string, log *slog.Logger) *moduleobject.Writer {
	if !o.moduleObjects {
		return nil
	}
	return moduleobject.New(moduleobject.Options{Dynamic: dyn, Namespace: namespace, Clock: clock.RealClock{}, Logger: log})
}
