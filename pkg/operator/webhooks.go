package operator

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
)

// newWebhooks builds the webhooks' owner: with cfg (nil: no webhook
// server) the server it serves with, answering with the operator's
// checks.
func (o *Operator) newWebhooks(cfg *admission.Config) (*admission.Webhooks, error) {
	if cfg == nil {
		return o.webhooksWith(nil, admission.StandbyOptions{}), nil
	}
	srv, err := admission.NewServer(cfg, o.checks, o.modules, o.clock, o.log)
	if err != nil {
		return nil, fmt.Errorf("webhook server: %w", err)
	}
	standby := admission.StandbyOptions{Enabled: cfg.Standby}
	if cfg.StandbyConfig != nil {
		standby.Config = cfg.StandbyConfig(o.configChecks())
	}
	return o.webhooksWith(srv, standby), nil
}

// webhooksWith builds the webhooks' owner serving with srv (nil: none).
func (o *Operator) webhooksWith(srv admission.Server, standby admission.StandbyOptions) *admission.Webhooks {
	standby.EmptyWhenMissing, standby.RetryDelay, standby.RetryMaxDelay = o.opts.Config.EmptyWhenMissing(), o.opts.Retry.Delay, o.opts.Retry.MaxDelay
	var mons admission.Monitors
	if o.monitors != nil {
		mons = o.monitors
	}
	var hm admission.HookMetrics
	if o.hookMetrics != nil {
		hm = o.hookMetrics
	}
	return admission.New(admission.Options{
		Server: srv, Checks: o.checks, Modules: o.modules, Store: o.store, Hooks: o.runner, Monitors: mons,
		HookValues: o.moduleHookValues, RecordRun: o.recordHookRun, HookMetrics: hm, Standby: standby, Clock: o.clock, Logger: o.log,
	})
}

// Webhooks returns the owner of hooks' webhook bindings and of the webhook
// server, whose Run serves on every replica.
func (o *Operator) Webhooks() *admission.Webhooks { return o.webhooks }

// enableWebhooks registers the webhook bindings of a module's (m) or the
// global hooks (m nil) with the server, once.
func (o *Operator) enableWebhooks(ctx context.Context, m *module.Module, hooks []*binding.Hook) error {
	return o.webhooks.Enable(ctx, m, hooks)
}
