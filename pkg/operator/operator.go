// Package operator orchestrates addon-operator: the startup sequence, the
// converge and module-run task graph on the main queue, and the reactions to
// ConfigMap changes.
package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/kube/monitor"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/schedule"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// releaser manages modules' Helm releases; *helm.Client is the real one.
type releaser interface {
	Apply(ctx context.Context, r helm.Release) (helm.Outcome, error)
	Uninstall(ctx context.Context, name string) (bool, error)
	Status(ctx context.Context, name string) (helm.Status, error)
	Owned(ctx context.Context) ([]string, error)
}

// configSource watches the users' ConfigMap and writes hooks' config
// patches back; *config.Source is the real one.
type configSource interface {
	Run(ctx context.Context) error
	Write(ctx context.Context, edit config.Edit) error
}

// Deps are the operator's seams to the outside world.
type Deps struct {
	Hooks    hookRunner
	Releases releaser
	Config   configSource
	// ConfigEvents receives what Config observes.
	ConfigEvents <-chan config.Event
	// Monitors and MonitorEvents serve kubernetes bindings.
	Monitors      monitors
	MonitorEvents <-chan monitor.Event
	// Scheduler and Ticks serve schedule bindings.
	Scheduler scheduler
	Ticks     <-chan schedule.Tick
	// Patcher applies hooks' object operations.
	Patcher objectPatcher
	// Healer and HealEvents put deleted release objects back; Drift reports
	// (and with Options.HealDrift reverts) changed ones; CRDs applies
	// modules' crds/. Each may be nil.
	Healer     healer
	HealEvents <-chan heal.Event
	Drift      driftChecker
	CRDs       crdApplier
	// Events records Kubernetes Events about module failures and
	// recoveries; nil records none.
	Events moduleEvents
	// ConfigMapEvents records Kubernetes Events about the ConfigMap being
	// deleted, recreated and rejected; nil records none.
	ConfigMapEvents configMapEvents
	// HookMetrics keeps hooks' metrics; Recorder records the operator's own.
	HookMetrics hookMetricsSink
	Recorder    *metrics.Recorder
	Clock       clock.WithDelayedExecution
	Logger      *slog.Logger
}

// Operator runs modules. Create it with New and start it with Run.
type Operator struct {
	opts     Options
	log      *slog.Logger
	clock    clock.WithDelayedExecution
	runner   hookRunner
	releases releaser
	config   configSource
	events   <-chan config.Event

	monitors      monitors
	monitorEvents <-chan monitor.Event
	scheduler     scheduler
	ticks         <-chan schedule.Tick
	patcher       objectPatcher
	hookMetrics   hookMetricsSink
	recorder      *metrics.Recorder
	moduleEvents  moduleEvents
	healer        healer
	healEvents    <-chan heal.Event
	drift         driftChecker
	crds          crdApplier
	bindings      *registry

	modules *module.Set
	store   *store
	state   *states
	queues  *queues
	main    *queue.Queue[task] // queues.get(mainQueue)

	// Owned by the main queue worker.
	global     []*loadedHook
	started    bool // the first converge was queued
	converging bool
	// convergeGen counts plans; tasks of an older one are stale.
	convergeGen    int
	convergeStart  time.Time
	convergeGroups [][]string

	pool *moduleRunner

	// invalidConfig holds modules whose ConfigMap section failed its
	// schema at startup; they are skipped until a valid section arrives.
	invalidMu     sync.Mutex
	invalidConfig map[string]error

	startedAt time.Time
	ready     atomic.Bool

	cfgHealth    configHealth
	configEvents configMapEvents
}

// New discovers modules and global hooks and prepares the operator.
func New(opts Options, deps Deps) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	mods, err := module.Discover(module.Options{
		ModulesDirs:     module.SplitDirs(opts.ModulesDirs),
		GlobalHooksDir:  opts.GlobalHooksDir,
		UnnumberedOrder: opts.UnnumberedModulesOrder,
		Logger:          deps.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("discover modules: %w", err)
	}
	names := make([]string, 0, len(mods.Modules()))
	for _, m := range mods.Modules() {
		names = append(names, m.Name())
	}
	st, err := newStore(mods)
	if err != nil {
		return nil, err
	}
	o := &Operator{
		opts: opts, log: deps.Logger, clock: deps.Clock,
		runner: deps.Hooks, releases: deps.Releases, config: deps.Config, events: deps.ConfigEvents,
		modules: mods, store: st, state: newStates(names), invalidConfig: map[string]error{},
		monitors: deps.Monitors, monitorEvents: deps.MonitorEvents, scheduler: deps.Scheduler, ticks: deps.Ticks,
		patcher: deps.Patcher, hookMetrics: deps.HookMetrics, recorder: deps.Recorder, moduleEvents: deps.Events, bindings: newRegistry(),
		healer: deps.Healer, healEvents: deps.HealEvents, drift: deps.Drift, crds: deps.CRDs,
		configEvents: deps.ConfigMapEvents,
	}
	backoff := queue.ExponentialBackoff(opts.RetryDelay, opts.RetryMaxDelay)
	o.queues = newQueues(deps.Clock, backoff, mergeTasks)
	o.pool = newModuleRunner(opts.ModuleWorkers, o.attempt, backoff, deps.Clock)
	o.main = o.queues.get(mainQueue)
	deps.Logger.Info("modules discovered", slog.Int("modules", len(names)), slog.Int("global_hooks", len(mods.Global().Hooks())))
	return o, nil
}

// Run works until ctx is cancelled: it watches the ConfigMap, runs the
// startup sequence once the ConfigMap was read, then reacts to changes.
func (o *Operator) Run(ctx context.Context) error {
	o.startedAt = o.clock.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return o.config.Run(ctx) })
	if o.moduleEvents != nil {
		g.Go(func() error { return o.moduleEvents.Run(ctx) })
	}
	if o.healer != nil {
		g.Go(func() error { return o.healer.Run(ctx) })
	}
	g.Go(func() error { return o.monitors.Run(ctx) })
	g.Go(func() error { return o.scheduler.Run(ctx) })
	g.Go(func() error { return o.queues.Run(ctx, o.handle) })
	g.Go(func() error { return o.pool.Run(ctx) })
	g.Go(func() error { return o.watchConfig(ctx) })
	g.Go(func() error { return o.routeBindingEvents(ctx) })
	g.Go(func() error { return o.recordQueues(ctx) })
	return g.Wait()
}

// queueMetricsInterval is how often queue lengths are published.
const queueMetricsInterval = 5 * time.Second

// recordQueues publishes every queue's length and its head task's wait.
func (o *Operator) recordQueues(ctx context.Context) error {
	if o.recorder == nil {
		return nil
	}
	tick := o.clock.NewTimer(queueMetricsInterval)
	defer tick.Stop()
	for {
		for _, s := range o.queues.snapshots() {
			o.recorder.QueueLength(s.Name, len(s.Items))
			if len(s.Items) > 0 {
				o.recorder.QueueWait(s.Name, o.clock.Since(s.Items[0].Queued))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
			tick.Reset(queueMetricsInterval)
		}
	}
}

// routeBindingEvents turns monitor events and schedule ticks into hook
// runs on their bindings' queues.
func (o *Operator) routeBindingEvents(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-o.monitorEvents:
			o.routeMonitorEvent(ev)
		case tick := <-o.ticks:
			o.routeTick(tick)
		case ev := <-o.healEvents:
			o.routeHeal(ev)
		}
	}
}

func (o *Operator) routeMonitorEvent(ev monitor.Event) {
	ref, ok := o.bindings.get(ev.ID)
	if !ok || ref.Kube == nil {
		return
	}
	bc := hook.BindingContext{Binding: ref.name(), Type: hook.TypeEvent, WatchEvent: ev.WatchEvent, Object: ev.Object, FilterResult: ev.FilterResult}
	if g := ref.group(); g != "" {
		bc = hook.BindingContext{Binding: ref.name(), Type: hook.TypeGroup, GroupName: g}
	}
	o.queueHookRun(ev.ID, ref, bc)
}

func (o *Operator) routeTick(tick schedule.Tick) {
	ref, ok := o.bindings.get(tick.ID)
	if !ok || ref.Sched == nil {
		return
	}
	bc := hook.BindingContext{Binding: ref.name(), Type: hook.TypeSchedule}
	if g := ref.group(); g != "" {
		bc = hook.BindingContext{Binding: ref.name(), Type: hook.TypeGroup, GroupName: g}
	}
	o.queueHookRun(tick.ID, ref, bc)
}

// queueHookRun appends a hook run to its binding's queue. Runs of a
// module that is not enabled are dropped.
func (o *Operator) queueHookRun(id string, ref bindingRef, bc hook.BindingContext) {
	if ref.Module != "" && !o.state.get(ref.Module).Enabled {
		return
	}
	o.queues.get(ref.queue()).PushBack(task{Kind: taskHookRun, Module: ref.Module, Hook: ref.Hook, BindingID: id, Contexts: []hook.BindingContext{bc}})
}

// Ready reports whether the first converge has finished.
func (o *Operator) Ready() bool { return o.ready.Load() }

// Modules returns every module's status, in module order.
func (o *Operator) Modules() []status.ModuleStatus { return o.state.snapshot() }

// Queues returns a snapshot of every queue, main first.
func (o *Operator) Queues() []queue.Snapshot[task] { return o.queues.snapshots() }

// releaseExists reports whether the module has a release that the
// operator owns. A release of the module's name that someone else made is
// never uninstalled.
func (o *Operator) releaseExists(ctx context.Context, name string) (bool, error) {
	st, err := o.releases.Status(ctx, name)
	switch {
	case err == nil && !st.Owned:
		o.log.Info("release not created by addon-operator left in place", slog.String("module", name), slog.String("release", name))
		return false, nil
	case err == nil:
		return true, nil
	case errors.Is(err, helm.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("module %s: release status: %w", name, err)
	}
}

// helmRun installs or upgrades a module's release; the Helm client skips it
// when nothing changed.
func (o *Operator) helmRun(ctx context.Context, name string) error {
	m, _ := o.modules.Module(name)
	if !m.IsHelm() {
		return nil
	}
	global := o.store.GlobalValues()
	start := o.clock.Now()
	out, err := o.releases.Apply(ctx, helm.Release{
		Name:     name,
		ChartDir: m.Path(),
		Values:   map[string]any{globalKey: map[string]any(global), m.Key(): map[string]any(o.store.ModuleValues(m))},
	})
	if o.recorder != nil {
		op := "upgrade"
		if err == nil && out.Skipped {
			op = "skip"
		}
		o.recorder.HelmOperation(name, op, o.clock.Since(start))
	}
	if err != nil {
		return fmt.Errorf("module %s: helm: %w", name, err)
	}
	o.state.update(name, func(s *moduleState) { s.Revision = out.Revision })
	if err := o.afterDeploy(ctx, name, out.Manifest); err != nil {
		return err
	}
	log := o.log.With(slog.String("module", name), slog.String("release", name), slog.Int("revision", out.Revision))
	if out.Skipped {
		log.Debug("release up to date")
	} else {
		log.Info("release deployed", slog.String("reason", string(out.Reason)))
	}
	return nil
}
