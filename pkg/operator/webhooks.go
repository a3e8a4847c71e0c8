package operator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// webhookServer serves hooks' webhook bindings and writes them into the
// configurations; *webhook.Server is the real one.
type webhookServer interface {
	Set(ctx context.Context, owner string, e webhook.Entries) error
	Serve(owner string, e webhook.Entries) error
	Remove(ctx context.Context, owner string) error
}

// webhookOwners remembers whose webhook bindings are registered, so that a
// module's runs register them once and its deletion removes them. Module
// runs on the pool and the main queue worker write it under the mutex.
type webhookOwners struct {
	mu     sync.Mutex
	set    map[string]bool
	warned map[string]bool
}

func (w *webhookOwners) swap(owner string, registered bool) (was bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.set == nil {
		w.set = map[string]bool{}
	}
	was = w.set[owner]
	w.set[owner] = registered
	return was
}

// warnOnce reports whether owner has not been warned about yet.
func (w *webhookOwners) warnOnce(owner string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	first := !w.warned[owner]
	w.warned[owner] = true
	return first
}

// enableWebhooks registers the webhook bindings of a module's (m) or the
// global hooks (m nil) with the server, once: it returns when the API
// server has them in its configurations.
func (o *Operator) enableWebhooks(ctx context.Context, m *module.Module, hooks []*binding.Hook) error {
	owner := ""
	if m != nil {
		owner = m.Name()
	}
	entries := o.webhookEntries(m, hooks)
	if len(entries.Admission)+len(entries.Conversion) == 0 {
		return nil
	}
	if o.webhooks == nil {
		if o.webhookState.warnOnce(owner) {
			o.log.Warn("webhook bindings not served: the webhook server is off (--webhook-server)", slog.String(logkey.Module, owner))
		}
		return nil
	}
	if o.webhookState.swap(owner, true) {
		return nil
	}
	if err := o.webhooks.Set(ctx, owner, entries); err != nil {
		o.webhookState.swap(owner, false)
		return fmt.Errorf("register webhooks: %w", err)
	}
	o.log.Info("webhooks registered", slog.String(logkey.Module, owner),
		slog.Int(logkey.Count, len(entries.Admission)+len(entries.Conversion)))
	return nil
}

// disableWebhooks takes a module's webhook bindings out of the
// configurations.
func (o *Operator) disableWebhooks(ctx context.Context, owner string) error {
	if o.webhooks == nil || !o.webhookState.swap(owner, false) {
		return nil
	}
	if err := o.webhooks.Remove(ctx, owner); err != nil {
		o.webhookState.swap(owner, true)
		return fmt.Errorf("remove webhooks: %w", err)
	}
	o.log.Info("webhooks removed", slog.String(logkey.Module, owner))
	return nil
}

// webhookEntries lists the webhook bindings of hooks with how to run them.
func (o *Operator) webhookEntries(m *module.Module, hooks []*binding.Hook) webhook.Entries {
	owner := ""
	if m != nil {
		owner = m.Name()
	}
	var e webhook.Entries
	for _, h := range hooks {
		for i := range h.Config.Validating {
			b := &h.Config.Validating[i]
			e.Admission = append(e.Admission, webhook.Admission{Owner: owner, Hook: h.Name, Binding: *b, Run: o.webhookRun(m, h, b.IncludeSnapshotsFrom)})
		}
		for i := range h.Config.Mutating {
			b := &h.Config.Mutating[i]
			e.Admission = append(e.Admission, webhook.Admission{Owner: owner, Hook: h.Name, Mutating: true, Binding: *b, Run: o.webhookRun(m, h, b.IncludeSnapshotsFrom)})
		}
		for _, b := range h.Config.Conversions {
			e.Conversion = append(e.Conversion, webhook.Conversion{Owner: owner, Hook: h.Name, Binding: b, Run: o.webhookRun(m, h, b.IncludeSnapshotsFrom)})
		}
	}
	return e
}

// webhookRun runs a hook for one webhook request, at once, outside the
// queues, within the request's deadline. Only its response file and
// metrics are used: a webhook answers, it does not change values.
func (o *Operator) webhookRun(m *module.Module, h *binding.Hook, include []string) webhook.RunFunc {
	return func(ctx context.Context, bc hook.BindingContext) (*hook.Result, error) {
		owner := binding.GlobalOwner
		run := hook.Run{Path: h.Path, Kind: hook.RunWebhook, ConfigValues: o.store.ConfigFor(m), Hook: h.Name, Binding: bc.Binding}
		if m == nil {
			run.Values = values.Values{config.GlobalKey: o.store.GlobalDoc()[config.GlobalKey]}
		} else {
			owner, run.Module, run.Values = m.Name(), m.Name(), o.moduleHookValues(m)
		}
		if len(include) > 0 && o.monitors != nil {
			bc.Snapshots = o.snapshots(owner, h, include)
		}
		run.Contexts = []hook.BindingContext{bc}
		start := o.clock.Now()
		res, err := o.runner.Run(ctx, run)
		o.recordHookRun(run.Module, h, bc.Binding, start, err)
		if err != nil {
			return nil, err
		}
		if len(res.Metrics) > 0 && o.hookMetrics != nil {
			ms, err := metrics.ParseHookMetrics(res.Metrics)
			if err == nil {
				err = o.hookMetrics.Apply(metrics.Source{Module: run.Module, Hook: h.Name}, ms)
			}
			if err != nil {
				o.log.Warn("webhook hook metrics not kept", slog.String(logkey.Hook, h.Name), logkey.Err(err))
			}
		}
		return res, nil
	}
}
