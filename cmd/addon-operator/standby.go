package main

import (
	"log/slog"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// wireWebhooks hands the webhook server, when there is one, to the
// operator, and gives a replica that serves webhooks with --ha a second, read-only watch of the configuration (the ConfigMap, or the
// ModuleConfig objects with --config-source=moduleconfig) for its webhook
// runs while it does not lead; the leader's own watch starts with Run. The
// returned function hands the operator to the ModuleConfig watch, which
// asks it which modules exist.
func (o *startOptions) wireWebhooks(deps *operator.Deps, srv *webhook.Server, client kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger) func(*operator.Operator) {
	none := func(*operator.Operator) {}
	if srv == nil {
		return none
	}
	deps.Webhooks = srv
	if !o.leader.Enabled {
		return none
	}
	events := make(chan config.Event)
	cm := config.NewSource(client, o.operator.Namespace, o.operator.ConfigMap, events, log)
	deps.StandbyConfigEvents = events
	if o.api.configSource != configSourceModuleConfig {
		deps.StandbyConfig = cm
		return none
	}
	mcs := &configSource{configMap: cm, dyn: dyn, events: events, log: log}
	deps.StandbyConfig = mcs
	return func(op *operator.Operator) { mcs.op = op }
}
