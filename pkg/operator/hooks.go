package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// hookRunner runs hook executables; *hook.Executor is the real one.
type hookRunner interface {
	Config(ctx context.Context, path string) ([]byte, error)
	Run(ctx context.Context, r hook.Run) (*hook.Result, error)
}

// runGlobalHook runs one global hook for a lifecycle binding and keeps its
// patches. It returns whether global values (or dynamic enabled flags)
// changed.
func (o *Operator) runGlobalHook(ctx context.Context, h *binding.Hook, b hook.Binding) (bool, error) {
	bc := hook.BindingContext{Binding: string(b)}
	if b != hook.OnStartup { // bindings start after onStartup: nothing to show yet
		bc.Snapshots = o.lifecycleSnapshots(binding.GlobalOwner, h)
	}
	return o.runGlobalHookWith(ctx, h, string(b), []hook.BindingContext{bc})
}

// runGlobalHookWith runs a global hook with the given contexts and applies
// its outputs: values and config patches, object operations, metrics.
func (o *Operator) runGlobalHookWith(ctx context.Context, h *binding.Hook, bindingName string, contexts []hook.BindingContext) (bool, error) {
	before := values.Checksum(o.store.GlobalDoc())
	doc := o.store.GlobalDoc()
	start := o.clock.Now()
	res, err := o.runner.Run(ctx, hook.Run{
		Path:         h.Path,
		Kind:         hook.RunHook,
		Contexts:     contexts,
		Values:       values.Values{config.GlobalKey: doc[config.GlobalKey]},
		ConfigValues: o.store.ConfigFor(nil),
		Hook:         h.Name,
		Binding:      bindingName,
	})
	o.recordHookRun("", h, bindingName, start, err)
	if err == nil {
		err = o.keepGlobalOutputs(ctx, h, res)
	}
	if err != nil {
		return false, fmt.Errorf("global hook %s (%s): %w", h.Name, bindingName, err)
	}
	return valuesChanged(before, o.store.GlobalDoc()), nil
}

func (o *Operator) keepGlobalOutputs(ctx context.Context, h *binding.Hook, res *hook.Result) error {
	if err := o.store.AddGlobalPatch(res.ValuesPatch); err != nil {
		return fmt.Errorf("values patch: %w", err)
	}
	if err := o.writeConfigPatch(ctx, nil, res.ConfigValuesPatch); err != nil {
		return fmt.Errorf("config values patch: %w", err)
	}
	return o.applyOutputs(ctx, nil, h, res)
}

// moduleHookValues is what a module's hooks see in VALUES_PATH.
func (o *Operator) moduleHookValues(m *module.Module) values.Values {
	global := o.store.GlobalValues()
	global["enabledModules"] = o.state.enabledList()
	return values.Values{config.GlobalKey: global, m.Key(): o.store.ModuleValues(m)}
}

// runModuleHook runs one module hook for a lifecycle binding and keeps its
// patches. It returns whether the module's values changed.
func (o *Operator) runModuleHook(ctx context.Context, m *module.Module, h *binding.Hook, b hook.Binding) (bool, error) {
	bc := hook.BindingContext{Binding: string(b)}
	if b != hook.OnStartup { // bindings start after onStartup: nothing to show yet
		bc.Snapshots = o.lifecycleSnapshots(m.Name(), h)
	}
	return o.runModuleHookWith(ctx, m, h, string(b), []hook.BindingContext{bc})
}

// runModuleHookWith runs a module hook with the given contexts and applies
// its outputs.
func (o *Operator) runModuleHookWith(ctx context.Context, m *module.Module, h *binding.Hook, bindingName string, contexts []hook.BindingContext) (bool, error) {
	before := values.Checksum(o.store.ModuleValues(m))
	start := o.clock.Now()
	res, err := o.runner.Run(ctx, hook.Run{
		Path:         h.Path,
		Kind:         hook.RunHook,
		Contexts:     contexts,
		Values:       o.moduleHookValues(m),
		ConfigValues: o.store.ConfigFor(m),
		Module:       m.Name(),
		Hook:         h.Name,
		Binding:      bindingName,
	})
	o.recordHookRun(m.Name(), h, bindingName, start, err)
	if err == nil {
		err = o.keepModuleOutputs(ctx, m, h, res)
	}
	if err != nil {
		return false, fmt.Errorf("module %s hook %s (%s): %w", m.Name(), h.Name, bindingName, err)
	}
	return valuesChanged(before, o.store.ModuleValues(m)), nil
}

func (o *Operator) keepModuleOutputs(ctx context.Context, m *module.Module, h *binding.Hook, res *hook.Result) error {
	if err := o.store.AddModulePatch(m, res.ValuesPatch); err != nil {
		return fmt.Errorf("values patch: %w", err)
	}
	if err := o.writeConfigPatch(ctx, m, res.ConfigValuesPatch); err != nil {
		return fmt.Errorf("config values patch: %w", err)
	}
	return o.applyOutputs(ctx, m, h, res)
}

// recordHookRun counts a hook run and its duration.
func (o *Operator) recordHookRun(moduleName string, h *binding.Hook, bindingName string, start time.Time, err error) {
	if o.recorder != nil {
		o.recorder.HookRun(moduleName, h.Name, bindingName, o.clock.Since(start), err)
	}
}
