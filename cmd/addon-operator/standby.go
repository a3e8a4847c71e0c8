package main

import (
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
)

// wireStandby gives a replica that serves webhooks with --ha (cfg not nil)
// a second, read-only watch of the configuration (the ConfigMap, or the
// ModuleConfig objects with --config-source=moduleconfig) for its webhook
// runs while it does not lead; the leader's own watch starts with Run.
// The ModuleConfig watch is built with the checks of the modules the
// operator discovers, which it asks which modules exist.
func (o *startOptions) wireStandby(cfg *admission.Config, client kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger) {
	if cfg == nil || !o.leader.Enabled {
		return
	}
	cm := config.NewSource(client, o.operator.Namespace, o.operator.Config.ConfigMap, log)
	cfg.Standby = true
	if o.api.configSource != configSourceModuleConfig {
		cfg.StandbyConfig = func(config.Checks) admission.ConfigWatch { return cm }
		return
	}
	cfg.StandbyConfig = func(checks config.Checks) admission.ConfigWatch {
		return newConfigSource(cm, dyn, checks, nil, &sourceChoice{}, log)
	}
}
