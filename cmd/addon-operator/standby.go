package main

import (
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
)

// wireStandby gives a replica that serves webhooks with --ha (cfg not nil)
// a second, read-only watch of the configuration (the ConfigMap, or the
// ModuleConfig objects with --config-source=moduleconfig) for its webhook
// runs while it does not lead; the leader's own watch starts with Run. The
// returned function hands the operator to the ModuleConfig watch, which
// asks it which modules exist.
func (o *startOptions) wireStandby(cfg *admission.Config, client kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger) func(*operator.Operator) {
	none := func(*operator.Operator) {}
	if cfg == nil || !o.leader.Enabled {
		return none
	}
	events := make(chan config.Event)
	cm := config.NewSource(client, o.operator.Namespace, o.operator.Config.ConfigMap, events, log)
	cfg.Standby, cfg.StandbyEvents = true, events
	if o.api.configSource != configSourceModuleConfig {
		cfg.StandbyConfig = cm
		return none
	}
	mcs := &configSource{configMap: cm, dyn: dyn, events: events, log: log}
	cfg.StandbyConfig = mcs
	return func(op *operator.Operator) { mcs.op = op }
}
