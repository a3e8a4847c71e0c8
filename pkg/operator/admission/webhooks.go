package admission

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// Server serves hooks' webhook bindings and writes them into the
// configurations; *webhook.Server is the real one.
type Server interface {
	Set(ctx context.Context, owner string, e webhook.Entries) error
	Serve(owner string, e webhook.Entries) error
	Remove(ctx context.Context, owner string) error
	Run(ctx context.Context) error
	RunConfigurations(ctx context.Context) error
	Problem() string
}

// HookRunner prints hooks' configurations and runs them;
// *hook.Executor is the real one.
type HookRunner interface {
	Config(ctx context.Context, path string) ([]byte, error)
	Run(ctx context.Context, r hook.Run) (*hook.Result, error)
}

// Monitors keep the objects of kubernetes bindings, whose snapshots
// webhook runs include; *monitor.Monitors is the real one. When it is
// also a SnapshotMonitors, a standby keeps the snapshots webhook bindings
// include.
type Monitors interface {
	Run(ctx context.Context) error
	Snapshot(id string) []hook.FilteredObject
}

// HookMetrics keeps the metrics hooks write; *metrics.HookMetrics is the
// real one.
type HookMetrics interface {
	Apply(src metrics.Source, ms []metrics.HookMetric) error
}

// Config is what the command builds the webhook server and a standby
// from, besides the checks.
type Config struct {
	Server  webhook.Options
	Clients webhook.Clients
	// ModuleConfigs checks ModuleConfig objects at admission: the
	// configuration comes from them.
	ModuleConfigs bool
	// WriteGuard returns the guard of writes to the configuration for the
	// modules discovered; nil (or a nil guard) guards nothing.
	WriteGuard func(*module.Set) (*webhook.WriteGuard, error)
	// Redact takes secret values out of every answer; nil: none.
	Redact func(string) string
	// Standby serves webhooks while this replica does not lead (--ha),
	// reading the configuration with the watch StandbyConfig builds (nil:
	// none) with the checks of the modules discovered.
	Standby       bool
	StandbyConfig func(config.Checks) ConfigWatch
}

// NewServer builds the webhook server of cfg, answering with checks.
func NewServer(cfg *Config, checks *Checks, modules *module.Set, clk clock.Clock, log *slog.Logger) (*webhook.Server, error) {
	wc := webhook.Checks{ConfigMap: checks.CheckConfigMap, Redact: cfg.Redact}
	if cfg.ModuleConfigs {
		wc.ModuleConfig = checks.CheckModuleConfig
	}
	if cfg.WriteGuard != nil {
		g, err := cfg.WriteGuard(modules)
		if err != nil {
			return nil, err
		}
		wc.WriteGuard = g
	}
	return webhook.New(cfg.Server, cfg.Clients, wc, clk, log), nil
}

// Options are what the webhooks' owner is built with.
type Options struct {
	// Server serves the bindings; nil: no webhook server (hooks that
	// declare bindings get a warning).
	Server  Server
	Checks  *Checks
	Modules *module.Set
	Store   *store.Store
	Hooks   HookRunner
	// Monitors answer webhook runs' snapshots; nil: none.
	Monitors Monitors
	// HookValues are the values a module's hooks run with.
	HookValues func(m *module.Module) values.Values
	// RecordRun counts a hook run and its duration.
	RecordRun func(module string, h *binding.Hook, binding string, start time.Time, err error)
	// HookMetrics keeps what webhook runs' hooks write; nil: nothing.
	HookMetrics HookMetrics
	Standby     StandbyOptions
	Clock       clock.Clock
	Logger      *slog.Logger
}

// StandbyOptions are a standby's (--ha): how it reads the configuration
// and retries what it cannot watch yet.
type StandbyOptions struct {
	// Enabled serves webhooks while this replica does not lead.
	Enabled bool
	// Config reads the configuration, without writing it, while this
	// replica does not lead; nil: a standby's webhook runs see no
	// configured values.
	Config ConfigWatch
	// EmptyWhenMissing takes a missing configuration as empty once one
	// was seen (--config-missing=empty); otherwise the last one holds.
	EmptyWhenMissing bool
	// RetryDelay and RetryMaxDelay pace the retries of snapshot monitors
	// that failed to start.
	RetryDelay, RetryMaxDelay time.Duration
}

// Webhooks own hooks' webhook bindings on every replica: on the leader,
// module runs register them (Enable) and deletes remove them (Disable);
// on a standby, Run serves every hook's with the configuration and the
// snapshots they include. Create it with New.
type Webhooks struct {
	opts    Options
	log     *slog.Logger
	owners  owners
	standby *standby
}

// New returns the webhooks' owner.
func New(opts Options) *Webhooks {
	return &Webhooks{opts: opts, log: opts.Logger, standby: newStandby()}
}

// Run serves the webhook server, and on a standby every hook's webhook
// bindings (RunStandby), until ctx ends. Without a server it returns at
// once.
func (w *Webhooks) Run(ctx context.Context) error {
	if w.opts.Server == nil {
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	if w.opts.Standby.Enabled {
		g.Go(func() error { return w.RunStandby(ctx) })
	}
	g.Go(func() error { return w.opts.Server.Run(ctx) })
	return g.Wait()
}

// RunConfigurations keeps the webhook configurations in place until ctx
// ends; only the leader runs it.
func (w *Webhooks) RunConfigurations(ctx context.Context) error {
	if w.opts.Server == nil {
		return nil
	}
	return w.opts.Server.RunConfigurations(ctx)
}

// Problem is what keeps the webhook server from answering, "" when
// nothing does or there is no server.
func (w *Webhooks) Problem() string {
	if w.opts.Server == nil {
		return ""
	}
	return w.opts.Server.Problem()
}

// owners remembers whose webhook bindings are registered, so that a
// module's runs register them once and its deletion removes them. Module
// runs on the pool and the main queue worker write it under the mutex.
type owners struct {
	mu     sync.Mutex
	set    map[string]bool
	warned map[string]bool
}

func (w *owners) swap(owner string, registered bool) (was bool) {
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
func (w *owners) warnOnce(owner string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	first := !w.warned[owner]
	w.warned[owner] = true
	return first
}

// Enable registers the webhook bindings of a module's (m) or the global
// hooks (m nil) with the server, once: it returns when the API server has
// them in its configurations.
func (w *Webhooks) Enable(ctx context.Context, m *module.Module, hooks []*binding.Hook) error {
	owner := ""
	if m != nil {
		owner = m.Name()
	}
	entries := w.entries(m, hooks)
	if len(entries.Admission)+len(entries.Conversion) == 0 {
		return nil
	}
	if w.opts.Server == nil {
		if w.owners.warnOnce(owner) {
			w.log.Warn("webhook bindings not served: the webhook server is off (--webhook-server)", slog.String(logkey.Module, owner))
		}
		return nil
	}
	if w.owners.swap(owner, true) {
		return nil
	}
	if err := w.opts.Server.Set(ctx, owner, entries); err != nil {
		w.owners.swap(owner, false)
		return fmt.Errorf("register webhooks: %w", err)
	}
	w.log.Info("webhooks registered", slog.String(logkey.Module, owner),
		slog.Int(logkey.Count, len(entries.Admission)+len(entries.Conversion)))
	return nil
}

// Disable takes a module's webhook bindings out of the configurations.
func (w *Webhooks) Disable(ctx context.Context, owner string) error {
	if w.opts.Server == nil || !w.owners.swap(owner, false) {
		return nil
	}
	if err := w.opts.Server.Remove(ctx, owner); err != nil {
		w.owners.swap(owner, true)
		return fmt.Errorf("remove webhooks: %w", err)
	}
	w.log.Info("webhooks removed", slog.String(logkey.Module, owner))
	return nil
}

// entries lists the webhook bindings of hooks with how to run them.
func (w *Webhooks) entries(m *module.Module, hooks []*binding.Hook) webhook.Entries {
	owner := ""
	if m != nil {
		owner = m.Name()
	}
	var e webhook.Entries
	for _, h := range hooks {
		for i := range h.Config.Validating {
			b := &h.Config.Validating[i]
			e.Admission = append(e.Admission, webhook.Admission{Owner: owner, Hook: h.Name, Binding: *b, Run: w.run(m, h, b.IncludeSnapshotsFrom)})
		}
		for i := range h.Config.Mutating {
			b := &h.Config.Mutating[i]
			e.Admission = append(e.Admission, webhook.Admission{Owner: owner, Hook: h.Name, Mutating: true, Binding: *b, Run: w.run(m, h, b.IncludeSnapshotsFrom)})
		}
		for _, b := range h.Config.Conversions {
			e.Conversion = append(e.Conversion, webhook.Conversion{Owner: owner, Hook: h.Name, Binding: b, Run: w.run(m, h, b.IncludeSnapshotsFrom)})
		}
	}
	return e
}

// run runs a hook for one webhook request, at once, outside the queues,
// within the request's deadline. Only its response file and metrics are
// used: a webhook answers, it does not change values.
func (w *Webhooks) run(m *module.Module, h *binding.Hook, include []string) webhook.RunFunc {
	return func(ctx context.Context, bc hook.BindingContext) (*hook.Result, error) {
		owner := binding.GlobalOwner
		st := w.opts.Store
		run := hook.Run{Path: h.Path, Kind: hook.RunWebhook, ConfigValues: st.ConfigFor(m), Hook: h.Name, Binding: bc.Binding}
		if m == nil {
			run.Values = values.Values{config.GlobalKey: st.GlobalDoc()[config.GlobalKey]}
		} else {
			owner, run.Module, run.Values = m.Name(), m.Name(), w.opts.HookValues(m)
		}
		if len(include) > 0 && w.opts.Monitors != nil {
			bc.Snapshots = w.snapshots(owner, h, include)
		}
		run.Contexts = []hook.BindingContext{bc}
		start := w.opts.Clock.Now()
		res, err := w.opts.Hooks.Run(ctx, run)
		if w.opts.RecordRun != nil {
			w.opts.RecordRun(run.Module, h, bc.Binding, start, err)
		}
		if err != nil {
			return nil, err
		}
		w.keepMetrics(run.Module, h, res)
		return res, nil
	}
}

// keepMetrics keeps the metrics a webhook run's hook wrote.
func (w *Webhooks) keepMetrics(moduleName string, h *binding.Hook, res *hook.Result) {
	if len(res.Metrics) == 0 || w.opts.HookMetrics == nil {
		return
	}
	ms, err := metrics.ParseHookMetrics(res.Metrics)
	if err == nil {
		err = w.opts.HookMetrics.Apply(metrics.Source{Module: moduleName, Hook: h.Name}, ms)
	}
	if err != nil {
		w.log.Warn("webhook hook metrics not kept", slog.String(logkey.Hook, h.Name), logkey.Err(err))
	}
}

// snapshots are the objects of h's kubernetes bindings of names, empty
// for a binding without objects.
func (w *Webhooks) snapshots(owner string, h *binding.Hook, names []string) map[string][]hook.FilteredObject {
	out := make(map[string][]hook.FilteredObject, len(names))
	for _, name := range names {
		out[name] = []hook.FilteredObject{}
		for j := range h.Config.Kubernetes {
			if h.Config.Kubernetes[j].Name == name {
				if objs := w.opts.Monitors.Snapshot(binding.ID(owner, h, hook.Kubernetes, j)); objs != nil {
					out[name] = objs
				}
			}
		}
	}
	return out
}
