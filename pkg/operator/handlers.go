package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// handle is every queue's Handler: it dispatches one task, keeps the
// last error of a module whose task failed, and logs the outcome once.
func (o *Operator) handle(ctx context.Context, t task) ([]task, error) {
	start := o.clock.Now()
	next, err := o.dispatch(ctx, t)
	if err != nil {
		mod, _ := o.modules.Module(failedModule(t))
		o.learnValues(mod)
		if m := failedModule(t); m != "" {
			o.state.update(m, func(s *moduleState) { s.LastError = err.Error() })
		}
	}
	logTaskEnd(o.log, t, o.clock.Since(start), err)
	return next, err
}

// logTaskEnd logs the outcome of task t once.
func logTaskEnd(log *slog.Logger, t task, took time.Duration, err error) {
	log = log.With(slog.String(logkey.Task, t.String()), slog.Duration(logkey.Duration, took))
	if err != nil {
		log.Error("task failed, will retry", logkey.Err(err))
		return
	}
	log.Debug("task done")
}

// failedModule names the module whose LastError a failure of t sets, ""
// for tasks that fail no module.
func failedModule(t task) string {
	switch t := t.(type) {
	case hookRunTask:
		return t.module
	case syncTask:
		return t.module
	case startupTask, globalHookTask, convergeTask, convergePlanTask, runModulesTask, moduleDoneTask,
		afterAllTask, convergeDoneTask, moduleDeleteTask, moduleDeletedTask, purgeTask, applyConfigTask, globalBindingsTask:
		// A module's delete fails on the pool (deleteAttempt).
	}
	return ""
}

// errNoConfig is returned while no valid ConfigMap has been read.
var errNoConfig = errors.New("no valid ConfigMap read yet")

// startup loads global hooks and queues their onStartup runs, then the first
// converge. It waits for a valid ConfigMap: converging without one could
// uninstall modules the ConfigMap enables.
func (o *Operator) startup(ctx context.Context) ([]task, error) {
	if o.store.Config() == nil {
		if err := o.cfg.Health().Err(); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s is invalid: %w", o.opts.Namespace, o.opts.Config.ConfigMap, err)
		}
		return nil, errNoConfig
	}
	g := o.modules.Global()
	hooks, err := binding.Load(ctx, o.runner, g.HooksDir(), g.Hooks(), hook.Global)
	if err != nil {
		return nil, err
	}
	o.global = hooks
	if err := o.webhooks.Enable(ctx, nil, hooks); err != nil {
		return nil, err
	}
	// Every module hook prints its config now, so a broken one is reported
	// at startup while the other modules go on. A permanent error (a v0
	// configuration) keeps the module from running at all; with any other
	// error its runs fail and retry. Modules load in parallel, two per
	// core: each hook is a process start, and 2000 hooks one after the
	// other took 6.4 s of a start on 2 cores.
	var loads errgroup.Group
	loads.SetLimit(2 * runtime.GOMAXPROCS(0))
	for _, m := range o.modules.Modules() {
		loads.Go(func() error {
			if _, err := o.moduleHooks(ctx, m.Name()); err != nil {
				o.log.Error("module hooks not loaded", slog.String(logkey.Module, m.Name()), logkey.Err(err))
			}
			return nil
		})
	}
	_ = loads.Wait() // every load reports its own error
	if err := o.claimUnlabeled(ctx); err != nil {
		return nil, err
	}
	o.converge.started = true
	next := append(globalHookTasks(hooks, hook.OnStartup), globalBindingsTask{}, convergeTask{})
	return next, nil
}

// planConverge decides which modules are enabled and queues what follows from it.
func (o *Operator) planConverge(ctx context.Context) ([]task, error) {
	decisions, err := plan.Enabled(ctx, o.modules, o.store, o.runner)
	if err != nil {
		return nil, err
	}
	owned, err := o.releases.Owned(ctx)
	if err != nil {
		return nil, fmt.Errorf("list releases: %w", err)
	}
	p := plan.Converge(decisions, o.state.enabledSet(), owned)
	p.Delete = dependentsFirst(plan.Order(o.modules), p.Delete)
	for _, d := range decisions {
		o.state.update(d.Name, func(s *moduleState) {
			s.Enabled, s.By, s.Reason = d.Enabled, d.By, d.Reason
			if p.Startup[d.Name] {
				s.StartupDone = false
				s.Phase = status.PhaseWaiting
			}
		})
	}
	o.objects.Planned()
	// The plan's actions are values of one module attribute, not keys.
	o.log.Info("modules planned", slog.Any(logkey.Module, map[string][]string{"run": p.Run, "delete": p.Delete, "purge": p.Purge}))
	var deletes []string
	for _, name := range p.Delete {
		if m, ok := o.modules.Module(name); ok && m.Err() != nil {
			// Its files could not be read: "disabled" may only mean that
			// its values.yaml was lost. An unreadable input never deletes.
			o.log.Warn("module not deleted: its files cannot be read; fix them, or remove the module to delete its release",
				slog.String(logkey.Module, name), logkey.Err(m.Err()))
			continue
		}
		if name != o.converge.deleting { // else its delete is under way, and waited for
			deletes = append(deletes, name)
		}
	}
	o.converge.gen++
	o.converge.schedule = plan.NewSchedule(o.modules, p.Run)
	o.converge.passDone = false
	o.converge.deletes, o.converge.rest = deletes, nil
	for _, name := range p.Purge {
		o.converge.rest = append(o.converge.rest, purgeTask{release: name})
	}
	o.converge.rest = append(o.converge.rest, runModulesTask{gen: o.converge.gen})
	return o.converge.nextDelete(), nil
}

// convergeDone closes a converge; global values changed by afterAll hooks
// start another one.
func (o *Operator) convergeDone(t convergeDoneTask) []task {
	if values.Checksum(o.store.GlobalDoc()) != t.checksum {
		if o.main.Has(is[convergeTask]) {
			// A configuration applied while afterAll hooks ran changed
			// them and queued its converge: that one covers both.
			return nil
		}
		o.log.Info("afterAll hooks changed global values, converging again")
		return []task{convergeTask{}}
	}
	if o.recorder != nil {
		o.recorder.Converge(o.clock.Since(o.converge.began), nil)
	}
	o.objects.Converged()
	if o.ready.CompareAndSwap(false, true) {
		o.webhooks.DropSnapshots(func(name string) bool { return o.state.get(name).Enabled })
		o.logFirstConverge()
		return nil
	}
	o.log.Info("converge done", slog.Duration(logkey.Duration, o.clock.Since(o.converge.began)))
	return nil
}

// logFirstConverge says the first converge is done and, when some enabled
// modules' runs failed (they keep retrying), which.
func (o *Operator) logFirstConverge() {
	var failed []string
	enabled := 0
	snapshot := o.state.snapshot()
	for i := range snapshot {
		m := &snapshot[i]
		if !m.Enabled {
			continue
		}
		enabled++
		if m.Phase == status.PhaseFailed {
			failed = append(failed, m.Name)
		}
	}
	took, count := slog.Duration(logkey.Duration, o.clock.Since(o.startedAt)), slog.Int(logkey.Count, enabled)
	if len(failed) == 0 {
		o.log.Info("first converge done", took, count)
		return
	}
	// Same message, so that whoever waits for it finds it; the level and
	// the failed list tell.
	o.log.Warn("first converge done", took, count, slog.Any(logkey.Module, failed), slog.String(logkey.Reason, "failed modules keep retrying"))
}

// moduleHooks loads a module's hooks on first use and caches them.
func (o *Operator) moduleHooks(ctx context.Context, name string) ([]*binding.Hook, error) {
	if s := o.state.get(name); s.Hooks != nil || s.HooksErr != nil {
		return s.Hooks, s.HooksErr
	}
	m, _ := o.modules.Module(name)
	// On a module run's step, each hook's --config process is parked.
	hooks, err := binding.Load(ctx, parkedConfigs{r: o.runner}, m.Path(), m.Hooks(), hook.Module)
	if err != nil {
		err = fmt.Errorf("module %s: %w", name, err)
		if queue.IsTerminal(err) {
			o.state.update(name, func(s *moduleState) { s.HooksErr = err })
		}
		return nil, err
	}
	o.state.update(name, func(s *moduleState) { s.Hooks = hooks })
	return hooks, nil
}

// runModuleHooks runs a module's hooks of lifecycle binding b in order and
// returns the names of those that changed the module's values.
func (o *Operator) runModuleHooks(ctx context.Context, name string, hooks []*binding.Hook, b hook.Binding) ([]string, error) {
	m, _ := o.modules.Module(name)
	var changedBy []string
	for _, h := range binding.ByOrder(hooks, b) {
		changed, err := o.runLifecycleHook(ctx, m, h, b)
		if err != nil {
			return nil, err
		}
		if changed {
			changedBy = append(changedBy, h.Name)
		}
	}
	return changedBy, nil
}

// moduleDelete runs beforeDeleteHelm hooks (when a release exists),
// uninstalls the release, runs afterDeleteHelm hooks and forgets the
// module's hook patches. It runs as an attempt of the module on the pool
// (deleteAttempt), so each hook's process is parked (runner.Park).
func (o *Operator) moduleDelete(ctx context.Context, name string) error {
	m, _ := o.modules.Module(name)
	hooks, err := o.moduleHooks(ctx, name)
	if err != nil && !queue.IsTerminal(err) {
		return err
	}
	// Hooks that can never be loaded never ran: the module is deleted
	// without them. The uninstall's deletions are not heal events.
	defer o.releases.Pause(name)()
	// Before the uninstall: its objects go without their webhooks.
	if err := o.webhooks.Disable(ctx, name); err != nil {
		return err
	}
	exists, err := o.releases.Exists(ctx, name)
	if err != nil {
		return err
	}
	if exists {
		if _, err := o.runModuleHooks(ctx, name, hooks, hook.BeforeDeleteHelm); err != nil {
			return err
		}
		if err := o.releases.UninstallModule(ctx, m); err != nil {
			return err
		}
	}
	if _, err := o.runModuleHooks(ctx, m.Name(), hooks, hook.AfterDeleteHelm); err != nil {
		return err
	}
	o.stopBindings(name)
	o.releases.Forget(name)
	o.store.ResetModule(name)
	o.state.update(name, func(s *moduleState) { s.StartupDone, s.Reruns, s.Revision, s.LastError = false, 0, 0, "" })
	return nil
}

// applyConfig takes a new valid ConfigMap content into use and queues what
// it changes: a converge for global or enabled changes, module runs for
// changed module sections. It reports whether all of c is in force, so
// that it may be saved as the last applied configuration.
func (o *Operator) applyConfig(c *config.Config) bool {
	old := o.store.Config()
	moduleErrs, globalErr := o.checks.Validate(c, admission.Own)
	if !admission.Acceptable(old != nil, len(moduleErrs) > 0, globalErr) {
		errs := o.checks.SectionErrs(moduleErrs)
		if globalErr != nil {
			errs = append([]error{&config.KeyError{Key: config.GlobalKey, Err: globalErr}}, errs...)
		}
		o.cfg.Health().Reject(errors.Join(errs...), false)
		return false
	}
	// At startup there is no last valid ConfigMap: modules whose section is
	// invalid are skipped, the others converge.
	o.cfg.Health().SkipSections(moduleErrs)
	o.store.SetConfig(c)
	leftMaintenance := o.upkeep.ApplyMaintenance(o.modules.Modules(), c.Maintenance)
	switch {
	case len(moduleErrs) > 0:
		o.cfg.Health().Reject(errors.Join(o.checks.SectionErrs(moduleErrs)...), true)
	case o.cfg.Health().Held() == "":
		o.cfg.Health().Accept()
	default: // a held configuration: what the source says is still rejected
	}
	if !o.converge.started || old == nil {
		return len(moduleErrs) == 0
	}
	for _, name := range leftMaintenance {
		if o.state.get(name).Enabled {
			o.queueModuleRun(name) // reconcile what changed meanwhile at once
		}
	}
	change := config.Diff(old, c)
	o.cfg.ReportResets(old, c)
	if change.GlobalChanged || len(change.EnabledChanged) > 0 {
		keys := change.EnabledChanged // the ConfigMap keys whose change converges
		if change.GlobalChanged {
			keys = append([]string{config.GlobalKey}, keys...)
		}
		o.log.Info("ConfigMap changed global values or enabled flags, converging", slog.Any(logkey.Module, keys))
		o.queueConverge()
	}
	for _, key := range change.ModulesChanged {
		m, ok := o.moduleByKey(key)
		if !ok {
			o.log.Warn("ConfigMap has a section for an unknown module", slog.String(logkey.Module, key))
			continue
		}
		// A module whose Enabled flag changed too is the converge's: a
		// run of its own would deploy the module while the converge
		// uninstalls it, and leave objects behind.
		if o.state.get(m).Enabled && !slices.Contains(change.EnabledChanged, key) {
			o.queueModuleRun(m)
		}
	}
	return true
}

// queueConverge appends a converge unless one is already waiting to start.
func (o *Operator) queueConverge() {
	if !o.main.Has(is[convergeTask]) {
		o.main.PushBack(convergeTask{})
	}
}

func (o *Operator) moduleByKey(key string) (string, bool) {
	i := slices.IndexFunc(o.modules.Modules(), func(m *module.Module) bool { return m.Key() == key })
	if i < 0 {
		return "", false
	}
	return o.modules.Modules()[i].Name(), true
}

// phaseAfter is a module's phase once a run or a delete returned.
func phaseAfter(deleted, enabled bool, err error) status.Phase {
	switch {
	case err != nil:
		return status.PhaseFailed
	case deleted || !enabled:
		return status.PhaseDisabled
	default:
		return status.PhaseReady
	}
}
