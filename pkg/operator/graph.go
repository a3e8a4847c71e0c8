package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// The task graph. Every kind of task is one type below, and dispatch is the
// one place that maps a kind to its handler. An arrow "->" is a task a
// handler returns: the queue runs the returned tasks next, in order, ahead
// of what was already queued. "=>" is work that leaves the main queue or
// is queued from elsewhere.
//
//	first ConfigMap event  => Startup
//	every ConfigMap event  => ApplyConfig (at the head, replacing one still waiting)
//
//	Startup          -> GlobalHookRun onStartup ... (global hooks by ORDER)
//	                 -> GlobalBindings -> Converge
//	GlobalBindings   => Synchronization of global kubernetes bindings: run
//	                    in place, or HookRun Synchronization on the
//	                    binding's own queue
//	Converge         -> GlobalHookRun beforeAll ... -> ConvergePlan
//	ConvergePlan     -> ModuleDelete (the first disabled module, dependents
//	                    first), or what follows the deletes
//	ModuleDelete m   => m's delete on the module pool: beforeDeleteHelm,
//	                    uninstall, afterDeleteHelm (hook processes parked,
//	                    holding neither main nor a worker), forget its
//	                    values; its end queues ModuleDeleted at the head of
//	                    main, which the rest of the converge waits for
//	ModuleDeleted m  -> ModuleDelete (the next one), once all are done
//	                    -> ModulePurge ... (releases without a module)
//	                    -> RunModules
//	RunModules       => runs on the module pool of the modules the plan's
//	                    dependency graph lets start (plan.Schedule): what
//	                    they require is ready, and modules without
//	                    module.yaml find every lower order applied (its
//	                    release) or attempted; an attempt that parks to
//	                    wait for its objects queues ModuleApplied, and each
//	                    attempt's end ModuleDone, at the head of main
//	                 -> AfterAll, once no first attempt runs and no module
//	                    may start (those held by a requirement that is not
//	                    ready start when it becomes ready)
//	ModuleApplied m  -> RunModules
//	ModuleDone m     -> RunModules
//	AfterAll         -> GlobalHookRun afterAll ... -> ConvergeDone
//	ConvergeDone     -> Converge, when afterAll hooks changed global values
//
//	ApplyConfig      => Converge (global section or enabled flags changed),
//	                    module run (a module's section changed)
//	kubernetes event, schedule tick => HookRun on the binding's queue
//	HookRun          => Converge (global values changed),
//	                    module run (module values changed)
//	deleted release object => module run
//	module run       onStartup (first run after enabling) ->
//	                 Synchronization of its kubernetes bindings ->
//	                 beforeHelm -> CRDs -> Helm -> afterHelm (values
//	                 changed: run again, within a bound)
//
// A module run is not a task: the module pool (runner.Pool) runs it with
// per-module backoff, so a failing module never holds up the main queue.
// A newer ConvergePlan makes the older plan's RunModules and ModuleDone
// tasks stale: they do nothing.
//
//sumtype:decl
type task interface {
	fmt.Stringer
	// isTask seals the set of task kinds to this file.
	isTask()
}

// startupTask loads global hooks and queues their onStartup runs and the
// first converge.
type startupTask struct{}

// globalHookTask runs one global hook for a lifecycle binding.
type globalHookTask struct {
	hook    *binding.Hook
	binding hook.Binding
}

// convergeTask starts a converge: beforeAll hooks, then convergePlanTask.
type convergeTask struct{}

// convergePlanTask decides enabled modules and queues deletes, purges and
// the first module runs.
type convergePlanTask struct{}

// runModulesTask starts the modules of a converge's schedule that may
// start.
type runModulesTask struct{ gen int }

// moduleDoneTask is the end of an attempt of a module of a converge's
// schedule.
type moduleDoneTask struct {
	gen    int
	module string
	err    error
	// applied is set when the attempt has only applied its release and
	// waits for its objects: it releases the higher order groups.
	applied bool
}

// afterAllTask runs afterAll hooks, then convergeDoneTask.
type afterAllTask struct{}

// convergeDoneTask closes a converge. checksum is the global values'
// checksum before the afterAll hooks.
type convergeDoneTask struct{ checksum string }

// moduleDeleteTask asks the module pool for a disabled module's delete:
// its release uninstalled around its delete hooks.
type moduleDeleteTask struct{ module string }

// moduleDeletedTask is the end of a module's delete on the pool: err is
// its error, the delete retrying with backoff.
type moduleDeletedTask struct {
	module string
	err    error
}

// purgeTask uninstalls a release of ours whose module is gone.
type purgeTask struct{ release string }

// applyConfigTask takes a new ConfigMap content into use.
type applyConfigTask struct{ config *config.Config }

// globalBindingsTask starts global hooks' kubernetes and schedule bindings
// and runs their Synchronization.
type globalBindingsTask struct{}

// hookRunTask runs a hook for kubernetes or schedule binding contexts, on
// main or the binding's queue. Consecutive runs of one hook merge.
type hookRunTask struct {
	module    string // "" for global hooks
	hook      *binding.Hook
	bindingID string
	contexts  []hook.BindingContext
}

// syncTask is one Synchronization run of a hook for one or more of its
// kubernetes bindings; their objects are read when it runs.
type syncTask struct {
	module     string // "" for global hooks
	hook       *binding.Hook
	bindingIDs []string
}

func (startupTask) isTask()        {}
func (globalHookTask) isTask()     {}
func (convergeTask) isTask()       {}
func (convergePlanTask) isTask()   {}
func (runModulesTask) isTask()     {}
func (moduleDoneTask) isTask()     {}
func (afterAllTask) isTask()       {}
func (convergeDoneTask) isTask()   {}
func (moduleDeleteTask) isTask()   {}
func (moduleDeletedTask) isTask()  {}
func (purgeTask) isTask()          {}
func (applyConfigTask) isTask()    {}
func (globalBindingsTask) isTask() {}
func (hookRunTask) isTask()        {}
func (syncTask) isTask()           {}

// dispatch runs a task's handler and returns the tasks it queues next.
func (o *Operator) dispatch(ctx context.Context, t task) ([]task, error) {
	switch t := t.(type) {
	case startupTask:
		return o.startup(ctx)
	case globalHookTask:
		_, err := o.runLifecycleHook(ctx, nil, t.hook, t.binding)
		return nil, err
	case convergeTask:
		o.converge.began = o.clock.Now()
		return append(globalHookTasks(o.global, hook.BeforeAll), convergePlanTask{}), nil
	case convergePlanTask:
		return o.planConverge(ctx)
	case runModulesTask:
		return o.runModules(t.gen), nil
	case moduleDoneTask:
		return o.moduleDone(t), nil
	case afterAllTask:
		return append(globalHookTasks(o.global, hook.AfterAll),
			convergeDoneTask{checksum: values.Checksum(o.store.GlobalDoc())}), nil
	case convergeDoneTask:
		return o.convergeDone(t), nil
	case moduleDeleteTask:
		o.startDelete(t.module)
		return nil, nil
	case moduleDeletedTask:
		return o.deleted(t), nil
	case purgeTask:
		o.releases.Purge(ctx, t.release)
		return nil, nil
	case applyConfigTask:
		if o.applyConfig(t.config) {
			o.cfg.Save(ctx, t.config)
		}
		return nil, nil
	case globalBindingsTask:
		ids, err := o.startBindings(ctx, binding.GlobalOwner, o.global)
		if err != nil {
			return nil, err
		}
		return nil, o.synchronize(ctx, ids)
	case hookRunTask:
		return nil, o.hookRun(ctx, t.bindingID, t.module, t.contexts)
	case syncTask:
		return nil, o.syncRun(ctx, t.module, t.bindingIDs)
	}
	return nil, fmt.Errorf("unknown task %T", t)
}

// convergeState is what the converge in progress is doing. The main queue
// worker owns it: only main-queue handlers read or write it.
type convergeState struct {
	// started is set once Startup ran: from then on ConfigMap changes
	// queue converges and module runs.
	started bool
	// gen counts plans; group tasks of an older plan are stale.
	gen int
	// began is when the converge started, for its duration metric.
	began time.Time
	// schedule walks the plan's modules to run through their dependency
	// graph.
	schedule *plan.Schedule
	// passDone is set once the plan's pass queued the afterAll hooks.
	passDone bool
	// deletes are the plan's disabled modules whose delete has not
	// started, in order; deleting is the module whose delete runs on the
	// pool (of this plan or an earlier one), "" when none; rest is what
	// follows the deletes (purges, RunModules), queued once both are
	// done.
	deletes  []string
	deleting string
	rest     []task
}

func (startupTask) String() string      { return "Startup" }
func (convergeTask) String() string     { return "Converge" }
func (convergePlanTask) String() string { return "ConvergePlan" }
func (afterAllTask) String() string     { return "AfterAll" }
func (convergeDoneTask) String() string { return "ConvergeDone" }
func (applyConfigTask) String() string  { return "ApplyConfig" }

func (globalBindingsTask) String() string { return "GlobalBindings" }

func (t globalHookTask) String() string {
	return fmt.Sprintf("GlobalHookRun %s:%s", t.binding, t.hook.Name)
}

func (t runModulesTask) String() string { return fmt.Sprintf("RunModules (converge %d)", t.gen) }

func (t moduleDoneTask) String() string {
	if t.applied {
		return fmt.Sprintf("ModuleApplied %s (converge %d)", t.module, t.gen)
	}
	return fmt.Sprintf("ModuleDone %s (converge %d)", t.module, t.gen)
}

func (t moduleDeleteTask) String() string  { return "ModuleDelete " + t.module }
func (t moduleDeletedTask) String() string { return "ModuleDeleted " + t.module }
func (t purgeTask) String() string         { return "ModulePurge " + t.release }

func (t hookRunTask) String() string {
	return fmt.Sprintf("HookRun %s/%s (%d contexts)", ownerName(t.module), t.hook.Name, len(t.contexts))
}

func (t syncTask) String() string {
	return fmt.Sprintf("HookRun %s/%s Synchronization", ownerName(t.module), t.hook.Name)
}

// mainQueue is the queue of lifecycle work and of bindings without a queue.
const mainQueue = "main"

// ownerName names a hook's owner: its module, or binding.GlobalOwner.
func ownerName(module string) string {
	if module == "" {
		return binding.GlobalOwner
	}
	return module
}

// is matches queued tasks of kind T, for deduplication.
func is[T task](t task) bool {
	_, ok := t.(T)
	return ok
}

// globalHookTasks returns one task per global hook with binding b, in order.
func globalHookTasks(hooks []*binding.Hook, b hook.Binding) []task {
	sorted := binding.ByOrder(hooks, b)
	out := make([]task, 0, len(sorted))
	for _, h := range sorted {
		out = append(out, globalHookTask{hook: h, binding: b})
	}
	return out
}

// mergeTasks combines consecutive runs of one hook into one run with all
// their binding contexts; other tasks never merge.
func mergeTasks(head, next task) (task, bool) {
	h, ok1 := head.(hookRunTask)
	n, ok2 := next.(hookRunTask)
	if !ok1 || !ok2 || h.hook != n.hook || h.module != n.module {
		return head, false
	}
	h.contexts = append(append([]hook.BindingContext(nil), h.contexts...), n.contexts...)
	// The binding id only selects the hook's settings; any of the merged
	// bindings' ids names the same hook.
	return h, true
}
