package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// hookRunner runs hook executables; *hook.Executor is the real one.
type hookRunner interface {
	Config(ctx context.Context, path string) ([]byte, error)
	Run(ctx context.Context, r hook.Run) (*hook.Result, error)
}

// runLifecycleHook runs a global (m nil) or module hook for a lifecycle
// binding and keeps its patches. It returns whether the values it may
// patch changed: see runHook.
func (o *Operator) runLifecycleHook(ctx context.Context, m *module.Module, h *binding.Hook, b hook.Binding) (bool, error) {
	bc := hook.BindingContext{Binding: string(b)}
	if b != hook.OnStartup { // bindings start after onStartup: nothing to show yet
		owner := binding.GlobalOwner
		if m != nil {
			owner = m.Name()
		}
		bc.Snapshots = o.lifecycleSnapshots(owner, h)
	}
	return o.runHook(ctx, m, h, string(b), []hook.BindingContext{bc})
}

// runHook runs a global (m nil) or module hook with the given contexts and
// applies its outputs: values and config patches, object operations,
// metrics. It returns whether the values the hook may patch changed:
// global values and dynamic enabled flags for a global hook, the module's
// values for a module hook.
func (o *Operator) runHook(ctx context.Context, m *module.Module, h *binding.Hook, bindingName string, contexts []hook.BindingContext) (bool, error) {
	run := hook.Run{Path: h.Path, Args: h.Args, Kind: hook.RunHook, Contexts: contexts, ConfigValues: o.store.ConfigFor(m), Hook: h.Name, Binding: bindingName}
	patchable, who := o.store.GlobalDoc, "global hook"
	if m == nil {
		run.Values = values.Values{config.GlobalKey: patchable()[config.GlobalKey]}
	} else {
		patchable, who = func() values.Values { return o.store.ModuleValues(m) }, "module "+m.Name()+" hook"
		run.Module, run.Values = m.Name(), o.moduleHookValues(m)
	}
	before := values.Checksum(patchable())
	// On a step of a module's run on the pool (onStartup, Synchronization,
	// beforeHelm, afterHelm) the process runs parked (runner.Park): the
	// worker is free for other modules until the process exits or its
	// timeout kills it. The run's duration is the process's.
	var res *hook.Result
	err := runner.Park(ctx, func(ctx context.Context) error {
		start := o.clock.Now()
		var err error
		res, err = o.runner.Run(ctx, run)
		o.recordHookRun(run.Module, h, bindingName, start, err)
		return err
	})
	if err == nil {
		err = o.keepOutputs(ctx, m, h, res)
	} else {
		err = o.applyOnHookError(ctx, res, err)
	}
	if err != nil {
		return false, fmt.Errorf("%s %s (%s): %w", who, h.Name, bindingName, err)
	}
	return valuesChanged(before, patchable()), nil
}

// keepOutputs keeps a successful run's values and config patches and
// applies its object operations and metrics.
func (o *Operator) keepOutputs(ctx context.Context, m *module.Module, h *binding.Hook, res *hook.Result) error {
	var err error
	if m == nil {
		err = o.store.AddGlobalPatch(res.ValuesPatch)
	} else {
		err = o.store.AddModulePatch(m, res.ValuesPatch)
	}
	if err != nil {
		return fmt.Errorf("values patch: %w", err)
	}
	if err := o.cfg.WritePatch(ctx, m, res.ConfigValuesPatch); err != nil {
		return fmt.Errorf("config values patch: %w", err)
	}
	return o.applyOutputs(ctx, m, h, res)
}

// moduleHookValues is what a module's hooks see in VALUES_PATH.
func (o *Operator) moduleHookValues(m *module.Module) values.Values {
	global := o.store.GlobalValues()
	global["enabledModules"] = o.state.enabledList()
	return values.Values{config.GlobalKey: global, m.Key(): o.store.ModuleValues(m)}
}

// recordHookRun counts a hook run and its duration.
func (o *Operator) recordHookRun(moduleName string, h *binding.Hook, bindingName string, start time.Time, err error) {
	if o.recorder != nil {
		o.recorder.HookRun(moduleName, h.Name, bindingName, o.clock.Since(start), err)
	}
}
