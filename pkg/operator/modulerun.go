package operator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// orderGroups splits the modules to run into groups of equal order, in
// ascending order; modules of one group may run in parallel.
func orderGroups(mods *module.Set, names []string) [][]string {
	var groups [][]string
	last := 0
	for i, name := range names {
		m, _ := mods.Module(name)
		if i == 0 || m.Order() != last {
			groups = append(groups, nil)
			last = m.Order()
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], name)
	}
	return groups
}

// runGroup starts the modules of one order group of the current converge
// on the runner. When every one of them has finished its first attempt
// (succeeded or failed; failed ones go on retrying on their own), the next
// group is queued; after the last group, the afterAll hooks. A task of an
// older converge (restarted since) does nothing.
func (o *Operator) runGroup(t task) []task {
	if t.Gen != o.convergeGen {
		return nil
	}
	if t.Group >= len(o.convergeGroups) {
		return []task{{Kind: taskAfterAll}}
	}
	group := o.convergeGroups[t.Group]
	next := task{Kind: taskRunGroup, Gen: t.Gen, Group: t.Group + 1}
	remaining := len(group)
	var mu sync.Mutex
	for _, name := range group {
		// A converge follows a change of global values or of the enabled
		// set, inputs of every module: a failing one need not wait out its
		// backoff.
		o.pool.retryNow(name, func(error) {
			mu.Lock()
			remaining--
			last := remaining == 0
			mu.Unlock()
			if last {
				o.main.PushFront(next)
			}
		})
	}
	return nil
}

// attempt is the runner's run function: one run of a module, with its
// phase, last error, log line and metrics kept.
func (o *Operator) attempt(ctx context.Context, name string) (bool, error) {
	if !o.state.get(name).Enabled {
		return false, nil // disabled since it was requested
	}
	start := o.clock.Now()
	defer o.pause(name)()
	o.state.update(name, func(s *moduleState) { s.Phase = status.PhaseRunning })
	failuresBefore, failingSince := o.pool.failures(name), o.pool.failingSince(name)
	again, err := o.runModule(ctx, name)
	o.recordModuleEvent(name, failuresBefore, err)
	d := o.clock.Since(start)
	if o.recorder != nil {
		o.recorder.ModuleRun(name, d, err)
	}
	o.state.update(name, func(s *moduleState) {
		s.Phase = phaseAfter(taskRunGroup, s.Enabled, err)
		if err != nil {
			s.LastError = err.Error()
		}
	})
	switch {
	case err != nil && ctx.Err() == nil:
		o.log.Error("module run failed, will retry", slog.String("module", name), slog.Duration("duration", d),
			slog.Int("failures", o.pool.failures(name)+1), slog.String("error", err.Error()))
	case err == nil && failuresBefore > 0:
		o.logRecovery(name, failuresBefore, failingSince)
	case err == nil:
		o.log.Debug("module run done", slog.String("module", name), slog.Duration("duration", d))
	}
	return again, err
}

// runModule runs one enabled module: onStartup hooks (first run after it
// was enabled), the Synchronization of its kubernetes bindings, beforeHelm
// hooks, its Helm release, afterHelm hooks. When afterHelm hooks change its
// values it asks to run again, within a bound.
func (o *Operator) runModule(ctx context.Context, name string) (bool, error) {
	if err := o.invalidConfigOf(name); err != nil {
		// Reported, not retried: only a valid section (which requests a
		// run) can fix it, and the other modules go on.
		o.log.Error("module skipped: its ConfigMap section is invalid", slog.String("module", name), slog.String("error", err.Error()))
		o.state.update(name, func(s *moduleState) { s.LastError = err.Error() })
		return false, nil //nolint:nilerr // reported above; retrying cannot fix a section only the user can
	}
	m, _ := o.modules.Module(name)
	hooks, err := o.moduleHooks(ctx, name)
	if err != nil {
		return false, err
	}
	if !o.state.get(name).StartupDone {
		if _, err := o.runModuleHooks(ctx, name, hooks, hook.OnStartup); err != nil {
			return false, err
		}
		o.state.update(name, func(s *moduleState) { s.StartupDone = true })
	}
	ids, err := o.startBindings(ctx, name, hooks)
	if err != nil {
		return false, err
	}
	if err := o.synchronize(ctx, ids); err != nil {
		return false, err
	}
	if _, err := o.runModuleHooks(ctx, name, hooks, hook.BeforeHelm); err != nil {
		return false, err
	}
	if err := o.store.validateModule(m, m.IsHelm()); err != nil {
		return false, err
	}
	if err := o.applyCRDs(ctx, m); err != nil {
		return false, err
	}
	if err := o.helmRun(ctx, name); err != nil {
		return false, err
	}
	changedBy, err := o.runModuleHooks(ctx, name, hooks, hook.AfterHelm)
	if err != nil {
		return false, err
	}
	return o.afterHelmChanged(name, changedBy)
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
	o.log.Info("afterHelm hooks changed values, running module again", slog.String("module", name), slog.Any("hook", changedBy))
	return true, nil
}

func (o *Operator) setInvalidConfig(errs map[string]error) {
	o.invalidMu.Lock()
	defer o.invalidMu.Unlock()
	o.invalidConfig = errs
}

func (o *Operator) invalidConfigOf(name string) error {
	o.invalidMu.Lock()
	defer o.invalidMu.Unlock()
	return o.invalidConfig[name]
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
func (o *Operator) recordModuleEvent(name string, failuresBefore int, err error) {
	switch {
	case o.moduleEvents == nil:
	case err != nil && failuresBefore == 0:
		o.moduleEvents.ModuleFailed(name, err)
	case err == nil && failuresBefore > 0:
		o.moduleEvents.ModuleRecovered(name, failuresBefore)
	}
}
