// Package operator orchestrates addon-operator: the startup sequence, the
// converge and module-run task graph on the main queue, and the reactions to
// ConfigMap changes.
package operator

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/confighealth"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/kube/monitor"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/operator/configwatch"
	"github.com/addon-operator/addon-operator/pkg/operator/modulepub"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/operator/queuemetrics"
	"github.com/addon-operator/addon-operator/pkg/operator/upkeep"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/redact"
	"github.com/addon-operator/addon-operator/pkg/release"
	"github.com/addon-operator/addon-operator/pkg/release/nelm"
	"github.com/addon-operator/addon-operator/pkg/runlog"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/schedule"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
)

// Deps are the operator's seams to the outside world.
type Deps struct {
	Hooks hookRunner
	// Releases applies modules' releases; when it also creates objects
	// ahead of a release (release.WeightCreator), werf.io/weight orders
	// their creation.
	Releases release.Releaser
	// Config builds the configuration source, which watches the users'
	// ConfigMap (or ModuleConfig objects, which it checks with the checks
	// New hands it) and writes hooks' config patches back.
	Config func(config.Checks) configwatch.Source
	// Monitors and MonitorEvents serve kubernetes bindings.
	Monitors      monitors
	MonitorEvents <-chan monitor.Event
	// Scheduler and Ticks serve schedule bindings.
	Scheduler scheduler
	Ticks     <-chan schedule.Tick
	// Patcher applies hooks' object operations.
	Patcher objectPatcher
	// Healer and HealEvents put deleted release objects back; Drift reports
	// (and with options.Release.HealDrift reverts) changed ones; CRDs applies
	// modules' crds/. Each may be nil.
	Healer     release.Healer
	HealEvents <-chan heal.Event
	Drift      release.DriftChecker
	CRDs       release.CRDApplier
	// Readiness waits for release objects to be ready after each
	// deploy; nil: a release is ready once Helm applied it.
	Readiness release.ReadinessChecker
	// Namespaces creates the namespaces module.yaml files name; nil
	// creates none.
	Namespaces release.NamespaceCreator

	// DriftChanges receives the heal watch's changes of release objects,
	// which start drift checks between module runs; nil checks only after
	// runs and on the resync timer.
	DriftChanges <-chan heal.Change

	// Events records Kubernetes Events about module failures and
	// recoveries; nil records none.
	Events moduleEvents
	// ConfigMapEvents records Kubernetes Events about the ConfigMap being
	// deleted, recreated and rejected; nil records none.
	ConfigMapEvents confighealth.Events
	// ModuleObjects shows every module's state as a Module object; nil
	// shows none.
	ModuleObjects modulepub.Writer
	// HookMetrics keeps hooks' metrics; Recorder records the operator's own.
	HookMetrics hookMetricsSink
	Recorder    *metrics.Recorder
	Clock       clock.WithDelayedExecution
	Logger      *slog.Logger

	// Webhooks builds the webhook server, which serves hooks' webhook
	// bindings and the checks of the configuration, and a standby's
	// (--ha); nil serves none (hooks that declare some get a warning).
	Webhooks *admission.Config

	// LastApplied keeps the last accepted configuration across restarts
	// (*config.LastApplied); nil keeps none: a missing source at start is
	// then an empty configuration.
	LastApplied configwatch.LastApplied
	// Redactor, when not nil, learns the values that texts leaving the
	// process must not show: those the schemas mark sensitive (before each
	// module run) and those of the Secrets each release renders.
	Redactor *redact.Redactor
}

// Operator runs modules. Create it with New and start it with Run.
type Operator struct {
	opts     options.Options
	log      *slog.Logger
	clock    clock.WithDelayedExecution
	runner   hookRunner
	releases *release.Manager
	// cfg watches the configuration, holds what is wrong with it and
	// writes hooks' config patches back.
	cfg *configwatch.Watch

	monitors      monitors
	monitorEvents <-chan monitor.Event
	scheduler     scheduler
	ticks         <-chan schedule.Tick
	patcher       objectPatcher
	hookMetrics   hookMetricsSink
	recorder      *metrics.Recorder
	queueMetrics  *queuemetrics.Publisher[task]
	moduleEvents  moduleEvents
	healEvents    <-chan heal.Event
	driftChanges  <-chan heal.Change
	bindings      *binding.Registry
	// checks check the configuration; webhooks own hooks' webhook
	// bindings, the webhook server and a standby's work.
	checks   *admission.Checks
	webhooks *admission.Webhooks

	modules *module.Set
	// requiring are the modules whose module.yaml requires others, in
	// module order: the only ones a requirement holds back or wakes.
	requiring []*module.Module
	store     *store.Store
	state     *states
	queues    *queue.Set[task]
	main      *queue.Queue[task] // queues.Get(mainQueue)

	// Owned by the main queue worker: global hooks, loaded by Startup, and
	// the converge in progress.
	global   []*binding.Hook
	converge convergeState

	pool *runner.Pool

	startedAt time.Time
	ready     atomic.Bool

	// objects publishes the Module objects; nil without them.
	objects *modulepub.Publisher
	// upkeep holds modules' maintenance and failed deployments.
	upkeep *upkeep.Upkeep
	// foreign is the ForeignReleases condition, set once by startup on the
	// main queue worker; nil when there is none.
	foreign atomic.Pointer[status.Condition]
	// redactor learns secret values; nil learns none.
	redactor *redact.Redactor
}

// New discovers modules and global hooks and prepares the operator.
func New(opts options.Options, deps Deps) (*Operator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	mods, err := module.Discover(opts.Discovery.Options(deps.Logger))
	if err != nil {
		return nil, fmt.Errorf("discover modules: %w", err)
	}
	names := make([]string, 0, len(mods.Modules()))
	for _, m := range mods.Modules() {
		names = append(names, m.Name())
	}
	st, err := store.New(mods)
	if err != nil {
		return nil, err
	}
	o := &Operator{
		opts: opts, log: deps.Logger, clock: deps.Clock,
		runner:  deps.Hooks,
		modules: mods, store: st,
		monitors: deps.Monitors, monitorEvents: deps.MonitorEvents, scheduler: deps.Scheduler, ticks: deps.Ticks,
		patcher: deps.Patcher, hookMetrics: deps.HookMetrics, recorder: deps.Recorder, moduleEvents: deps.Events, bindings: binding.New(),
		healEvents: deps.HealEvents, driftChanges: deps.DriftChanges, redactor: deps.Redactor,
	}
	// Module state and its publisher are built together: every change of
	// a module's state reaches its Module object.
	var ms *states
	o.objects = modulepub.New(deps.ModuleObjects, mods, opts.Namespace, func(name string) moduleobject.State {
		s := objectState(ms.get(name), o.upkeep.InMaintenance(name), o.clock.Now())
		// States change before the pool exists (module.yaml warnings
		// while New reads the modules): no attempts then.
		if o.pool != nil {
			s.Attempts, s.NextRetry = o.pool.Failures(name), o.pool.NextRetry(name)
		}
		return s
	}, func(name string, done func(error)) { o.pool.RetryNow(name, done) })
	ms = newStates(names, o.objects.Publish, runlog.New(deps.Clock, runlog.DefaultRuns))
	o.state = ms
	checker, _ := deps.Hooks.(admission.SettingsChecker)
	o.checks = admission.NewChecks(mods, st, checker, ms.enabledSet, deps.Logger)
	if o.webhooks, err = o.newWebhooks(deps.Webhooks); err != nil {
		return nil, err
	}
	for _, m := range mods.Modules() {
		if len(m.Requires()) > 0 {
			o.requiring = append(o.requiring, m)
		}
	}
	backoff := opts.Retry.Backoff()
	nelmEvents, _ := deps.Events.(nelm.Events) // nil when the module Events recorder records none of these
	o.releases = release.New(release.Options{
		Releases: deps.Releases, Healer: deps.Healer, Drift: deps.Drift, CRDs: deps.CRDs, Events: deps.Events,
		Recorder: deps.Recorder, HealDrift: opts.Release.HealDrift, Clock: deps.Clock, Logger: deps.Logger,
		Readiness: deps.Readiness, ReadinessTimeout: opts.Release.ReadinessTimeout, Progress: o.readinessProgress, Namespace: opts.Namespace,
		Namespaces: deps.Namespaces, Superseded: func(module string) <-chan struct{} { return o.pool.Superseded(module) },
		DriftDebounce: opts.Release.DriftDebounce, DriftResync: opts.Release.DriftResync, Rendered: nelm.NewWarnings(o.log, nelmEvents).After(o.learnRendered),
	})
	o.upkeep = upkeep.New(upkeep.Options{
		Releases: o.releases, Recorder: maintenanceRecorder(deps.Recorder), Events: remediationEvents(deps.Events), Logger: deps.Logger,
		Remediation: opts.Remediation.Strategy, RemediationRetries: opts.Remediation.Retries, Changed: o.objects.Publish,
	})
	o.markUnrunnable()
	o.queues = queue.NewSet(mainQueue, deps.Clock, backoff, mergeTasks)
	o.pool = runner.New(opts.ModuleWorkers, o.attempt, backoff, deps.Clock)
	o.pool.OnAttemptEnd(o.objects.Publish) // failures and the next retry, counted after the run's own updates
	o.main = o.queues.Get(mainQueue)
	o.cfg = o.newConfigWatch(deps)
	o.queueMetrics = queuemetrics.New(o.queues.Snapshots, queueRecorder(deps.Recorder), deps.Clock)
	deps.Logger.Info("modules discovered", slog.Int(logkey.Count, len(names)),
		slog.Group(logkey.Hook, slog.Int(logkey.Count, len(mods.Global().Hooks()))))
	return o, nil
}

// Run works until ctx is cancelled: it watches the ConfigMap, runs the
// startup sequence once the ConfigMap was read, then reacts to changes.
func (o *Operator) Run(ctx context.Context) error {
	o.startedAt = o.clock.Now()
	// A standby's configuration gives way to the leader's own reading, as
	// at any start; its monitors keep running, for Run to adopt.
	runMonitors := o.webhooks.BecomeLeader(func() { o.store.SetConfig(nil) })
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return o.cfg.Run(ctx) })
	if o.moduleEvents != nil {
		g.Go(func() error { return o.moduleEvents.Run(ctx) })
	}
	g.Go(func() error { return o.releases.Run(ctx) })
	g.Go(func() error { return o.releases.RunDrift(ctx, o.driftChanges) })
	if o.objects.Enabled() {
		g.Go(func() error { return o.objects.Run(ctx) })
	}
	if runMonitors {
		g.Go(func() error { return o.monitors.Run(ctx) })
	}
	g.Go(func() error { return o.scheduler.Run(ctx) })
	g.Go(func() error { return o.queues.Run(ctx, o.handle) })
	g.Go(func() error { return o.pool.Run(ctx) })
	g.Go(func() error { return o.routeBindingEvents(ctx) })
	g.Go(func() error { return o.queueMetrics.Run(ctx) })
	// Only the leader writes the webhook configurations.
	g.Go(func() error { return o.webhooks.RunConfigurations(ctx) })
	return g.Wait()
}

// queueRecorder is rec as the queue metrics' recorder: nil (none) when
// rec is nil, not an interface holding a nil pointer.
func queueRecorder(rec *metrics.Recorder) queuemetrics.Recorder {
	if rec == nil {
		return nil
	}
	return rec
}

// maintenanceRecorder is rec as upkeep's recorder: nil (none) when rec
// is nil, not an interface holding a nil pointer.
func maintenanceRecorder(rec *metrics.Recorder) upkeep.Recorder {
	if rec == nil {
		return nil
	}
	return rec
}

// remediationEvents returns the module Events recorder as upkeep's, when
// it records remediations; nil otherwise.
func remediationEvents(ev moduleEvents) upkeep.Events {
	if r, ok := ev.(upkeep.Events); ok {
		return r
	}
	return nil
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
	ref, ok := o.bindings.Get(ev.ID)
	if !ok || ref.Kube == nil {
		return
	}
	bc := hook.BindingContext{Binding: ref.Name(), Type: hook.TypeEvent, WatchEvent: ev.WatchEvent, Object: ev.Object, FilterResult: ev.FilterResult}
	if g := ref.Group(); g != "" {
		bc = hook.BindingContext{Binding: ref.Name(), Type: hook.TypeGroup, GroupName: g}
	}
	o.queueHookRun(ev.ID, ref, bc)
}

func (o *Operator) routeTick(tick schedule.Tick) {
	ref, ok := o.bindings.Get(tick.ID)
	if !ok || ref.Sched == nil {
		return
	}
	bc := hook.BindingContext{Binding: ref.Name(), Type: hook.TypeSchedule}
	if g := ref.Group(); g != "" {
		bc = hook.BindingContext{Binding: ref.Name(), Type: hook.TypeGroup, GroupName: g}
	}
	o.queueHookRun(tick.ID, ref, bc)
	if ref.Module != "" {
		o.objects.Publish(ref.Module) // its nextRunTime moved on
	}
}

// queueHookRun appends a hook run to its binding's queue. Runs of a
// module that is not enabled are dropped.
func (o *Operator) queueHookRun(id string, ref binding.Ref, bc hook.BindingContext) {
	if ref.Module != "" && !o.state.get(ref.Module).Enabled {
		return
	}
	o.queues.Get(ref.Queue()).PushBack(hookRunTask{module: ref.Module, hook: ref.Hook, bindingID: id, contexts: []hook.BindingContext{bc}})
}

// Ready reports whether the first converge has finished.
func (o *Operator) Ready() bool { return o.ready.Load() }

// Modules returns every module's status, in module order.
func (o *Operator) Modules() []status.ModuleStatus {
	out := o.state.snapshot()
	for i := range out {
		m, _ := o.modules.Module(out[i].Name)
		out[i].Namespace, out[i].Requires = o.releases.Namespace(m), m.Requires()
		out[i].Maintenance, out[i].Remediation = o.upkeep.InMaintenance(m.Name()), o.upkeep.Remediation(m.Name())
		describeModule(&out[i], m)
	}
	return out
}
