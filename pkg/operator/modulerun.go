package operator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/release"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// attempt is the runner's run function: the first step of an attempt of
// a module, with its phase, last error, log line and metrics kept. An
// attempt whose release must become ready parks after Helm (see
// runModule): no worker waits for readiness.
func (o *Operator) attempt(ctx context.Context, name string) (runner.Result, error) {
	if o.state.get(name).Phase == status.PhaseDeleting {
		return o.deleteAttempt(ctx, name)
	}
	if !o.state.get(name).Enabled {
		return runner.Result{}, nil // disabled since it was requested
	}
	if err := o.state.get(name).HooksErr; err != nil {
		// Not run, so not retried either: loading its hooks failed for good,
		// reported once when they were loaded; only changed hooks fix it.
		o.state.update(name, func(s *moduleState) { s.Phase, s.LastError = status.PhaseFailed, err.Error() })
		return runner.Result{}, err // terminal: see moduleHooks
	}
	if reqs := o.unready(name); len(reqs) > 0 {
		// Runs only once what it requires is ready; wakeDependents asks
		// again then.
		o.state.update(name, func(s *moduleState) {
			s.Held, s.Phase, s.Message = true, status.PhaseWaiting, waitingForModules(reqs)
		})
		o.state.runs.Held(name)
		// A requirement that became ready meanwhile may have looked for
		// held modules before this one was marked: run again then.
		return runner.Result{Again: len(o.unready(name)) == 0}, nil
	}
	a := attemptRecord{name: name, start: o.clock.Now(), failuresBefore: o.pool.Failures(name), failingSince: o.pool.FailingSince(name)}
	o.state.runs.Begin(name)
	o.state.update(name, func(s *moduleState) {
		// A module retrying after a failure stays Failed (Stalled, not
		// Ready) until a run succeeds: kubectl wait and health checks see
		// the failure, not a flicker between Failed and Running.
		if s.Phase != status.PhaseFailed {
			s.Phase = status.PhaseRunning
		}
	})
	resume := o.releases.Pause(name)
	step, err := o.runModule(ctx, name)
	resume()
	if err != nil || step.wait == nil {
		return o.endAttempt(ctx, a, step.again, err)
	}
	return parkedRun{o: o, a: a, step: step}.result(), nil
}

// attemptRecord is what the end of an attempt reports about it.
type attemptRecord struct {
	name           string
	start          time.Time
	failuresBefore int
	failingSince   time.Time
}

// endAttempt keeps an attempt's outcome: phase, last error, Events,
// metrics, log line, and the modules that waited for this one to be
// ready.
func (o *Operator) endAttempt(ctx context.Context, a attemptRecord, again bool, err error) (runner.Result, error) {
	name := a.name
	if err != nil {
		// Before the error is shown anywhere: it may quote them.
		m, _ := o.modules.Module(name)
		o.learnValues(m)
	}
	recordModuleEvent(o.moduleEvents, name, a.failuresBefore, err)
	o.state.runs.End(name, err)
	d := o.clock.Since(a.start)
	if o.recorder != nil {
		o.recorder.ModuleRun(name, d, err)
	}
	o.state.update(name, func(s *moduleState) {
		s.Phase = phaseAfter(false, s.Enabled, err)
		s.Held = false
		s.LastRun, s.LastRunDuration = o.clock.Now(), d
		if err != nil {
			s.LastError = err.Error()
		} else if !again {
			s.Message = ""
		}
	})
	o.recordReadiness(name, err, again)
	switch {
	case queue.IsTerminal(err):
		// Logged where it was found; only new inputs run it again.
	case err != nil && ctx.Err() == nil:
		o.log.Error("module run failed, will retry", slog.String(logkey.Module, name), slog.Duration(logkey.Duration, d),
			slog.Int(logkey.Count, o.pool.Failures(name)+1), logkey.Err(err))
	case err == nil && a.failuresBefore > 0:
		o.logRecovery(name, a.failuresBefore, a.failingSince)
	case err == nil:
		o.log.Debug("module run done", slog.String(logkey.Module, name), slog.Duration(logkey.Duration, d))
	}
	return runner.Result{Again: again}, err
}

// moduleStep is how the first step of a module's attempt ended: with the
// attempt done (again asks for another), or with its release applied and
// wait to be awaited before the afterHelm hooks in hooks run.
type moduleStep struct {
	again bool
	wait  release.Wait
	hooks []*binding.Hook
}

// runModule runs one enabled module: onStartup hooks (first run after it
// was enabled), the Synchronization of its kubernetes bindings, beforeHelm
// hooks, its Helm release, afterHelm hooks. When its release's objects
// must become ready first, it returns before the afterHelm hooks with the
// wait for them. When afterHelm hooks change its values it asks to run
// again, within a bound.
func (o *Operator) runModule(ctx context.Context, name string) (moduleStep, error) {
	if err := o.cfg.Health().SectionErr(name); err != nil {
		// Reported, not retried: only a valid section (which requests a
		// run) can fix it, and the other modules go on.
		o.log.Error("module skipped: its ConfigMap section is invalid", slog.String(logkey.Module, name), logkey.Err(err))
		return moduleStep{}, queue.TerminalError(err)
	}
	m, _ := o.modules.Module(name)
	hooks, err := o.moduleHooks(ctx, name)
	if err != nil {
		return moduleStep{}, err
	}
	if !o.state.get(name).StartupDone {
		if _, err := o.runModuleHooks(ctx, name, hooks, hook.OnStartup); err != nil {
			return moduleStep{}, err
		}
		o.state.update(name, func(s *moduleState) { s.StartupDone = true })
	}
	ids, err := o.startBindings(ctx, name, hooks)
	if err != nil {
		return moduleStep{}, err
	}
	if err := o.synchronize(ctx, ids); err != nil {
		return moduleStep{}, err
	}
	if _, err := o.runModuleHooks(ctx, name, hooks, hook.BeforeHelm); err != nil {
		return moduleStep{}, err
	}
	if err := o.store.ValidateModule(m, m.IsHelm()); err != nil {
		return moduleStep{}, err
	}
	if o.upkeep.InMaintenance(name) {
		// The release stays as it is: no CRDs, no Helm, so no afterHelm.
		o.log.Debug("module in maintenance, release left as it is", slog.String(logkey.Module, name))
		o.state.update(name, func(s *moduleState) { s.Reruns, s.LastError = 0, "" })
		return moduleStep{}, nil
	}
	o.state.runs.Step(name, status.StepHelm)
	if err := o.releases.ApplyCRDs(ctx, m); err != nil {
		return moduleStep{}, err
	}
	// Before the release: its first objects are already checked.
	if err := o.enableWebhooks(ctx, m, hooks); err != nil {
		return moduleStep{}, err
	}
	wait, err := o.deploy(ctx, m)
	if err != nil {
		return moduleStep{}, err
	}
	if wait != nil {
		return moduleStep{wait: wait, hooks: hooks}, nil
	}
	again, err := o.afterHelm(ctx, name, hooks)
	return moduleStep{again: again}, err
}

// afterHelm runs a module's afterHelm hooks, once its release is ready.
func (o *Operator) afterHelm(ctx context.Context, name string, hooks []*binding.Hook) (bool, error) {
	o.state.runs.Step(name, status.StepHooks)
	changedBy, err := o.runModuleHooks(ctx, name, hooks, hook.AfterHelm)
	if err != nil {
		return false, err
	}
	return o.afterHelmChanged(name, changedBy)
}

// deploy installs or upgrades a module's release with its values now. It
// returns the wait for the release's objects to be ready, nil when there
// is none to wait for.
func (o *Operator) deploy(ctx context.Context, m *module.Module) (release.Wait, error) {
	vals := map[string]any{
		config.GlobalKey: map[string]any(o.store.GlobalValues()), m.Key(): map[string]any(o.store.ModuleValues(m)),
	}
	rev, wait, err := o.releases.Deploy(ctx, m, vals)
	if rev > 0 {
		sum := ""
		if o.objects.Enabled() {
			sum = values.Checksum(vals)
		}
		o.state.update(m.Name(), func(s *moduleState) { s.Revision, s.ValuesChecksum = rev, sum })
	}
	if err != nil || wait == nil {
		// Else the wait's end tells whether the deploy worked.
		o.upkeep.AfterDeploy(ctx, m, err)
	}
	return wait, err
}

// afterHelmChanged bounds how often afterHelm hooks may change values in a
// row: the module runs again each time, until the bound fails the run.
func (o *Operator) afterHelmChanged(name string, changedBy []string) (bool, error) {
	if len(changedBy) == 0 {
		o.state.update(name, func(s *moduleState) { s.Reruns, s.LastError = 0, "" })
		return false, nil
	}
	var reruns int
	o.state.update(name, func(s *moduleState) { s.Reruns = min(s.Reruns+1, o.opts.MaxValuesReruns+1); reruns = s.Reruns })
	if reruns > o.opts.MaxValuesReruns {
		return false, fmt.Errorf("module %s: afterHelm hooks %v changed values on %d runs in a row; not running again until they settle",
			name, changedBy, o.opts.MaxValuesReruns)
	}
	o.log.Info("afterHelm hooks changed values, running module again", slog.String(logkey.Module, name), slog.Any(logkey.Hook, changedBy))
	return true, nil
}

// moduleEvents records module failures and recoveries as Kubernetes
// Events; *event.Recorder is the real one.
type moduleEvents interface {
	Run(ctx context.Context) error
	ModuleFailed(module string, err error)
	ModuleRecovered(module string, failures int)
	ObjectDrifted(module, object string, fields []string, reverted bool)
	ReleaseRecordDeleted(module, record string)
}

// recordModuleEvent sends an Event on the first failure of a streak and on
// the success that ends one, not on every retry.
func recordModuleEvent(events moduleEvents, name string, failuresBefore int, err error) {
	switch {
	case events == nil:
	case err != nil && failuresBefore == 0:
		events.ModuleFailed(name, err)
	case err == nil && failuresBefore > 0:
		events.ModuleRecovered(name, failuresBefore)
	}
}
