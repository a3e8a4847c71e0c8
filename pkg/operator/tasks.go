package operator

import (
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
)

// taskKind names what a task on the main queue does.
type taskKind string

const (
	// taskStartup loads global hooks and queues their onStartup runs and the
	// first converge.
	taskStartup taskKind = "Startup"
	// taskGlobalHook runs one global hook for a lifecycle binding.
	taskGlobalHook taskKind = "GlobalHookRun"
	// taskConverge starts a converge: beforeAll hooks, then taskPlan.
	taskConverge taskKind = "Converge"
	// taskPlan decides enabled modules and queues deletes, purges, runs and
	// the afterAll series.
	taskPlan taskKind = "ConvergePlan"
	// taskAfterAll runs afterAll hooks and converges again when they
	// changed global values.
	taskAfterAll taskKind = "AfterAll"
	// taskConvergeDone closes a converge.
	taskConvergeDone taskKind = "ConvergeDone"
	// taskRunGroup runs one order group of enabled modules on the module
	// runner and queues the next group once each of them finished its
	// first attempt.
	taskRunGroup taskKind = "RunOrderGroup"
	// taskModuleDelete uninstalls a disabled module's release around its
	// delete hooks.
	taskModuleDelete taskKind = "ModuleDelete"
	// taskPurge uninstalls a release of ours whose module is gone.
	taskPurge taskKind = "ModulePurge"
	// taskApplyConfig takes a new ConfigMap content into use.
	taskApplyConfig taskKind = "ApplyConfig"
	// taskGlobalBindings starts global hooks' kubernetes and schedule
	// bindings and runs their Synchronization.
	taskGlobalBindings taskKind = "GlobalBindings"
	// taskHookRun runs a hook for kubernetes or schedule binding contexts,
	// on main or the binding's queue.
	taskHookRun taskKind = "HookRun"
)

// task is one unit of work on the main queue.
type task struct {
	Kind taskKind
	// Module names the module (or release, for purges).
	Module string
	// Hook and Binding select a global lifecycle hook run.
	Hook    *loadedHook
	Binding hook.Binding
	// Gen and Group select an order group of a converge's plan.
	Gen, Group int
	// Checksum is the global values checksum before the afterAll hooks.
	Checksum string
	// Config is the ConfigMap content to apply.
	Config *config.Config
	// BindingID names the binding of a hook run.
	BindingID string
	// Sync marks a hook run as its binding's Synchronization.
	Sync bool
	// Contexts are a hook run's binding contexts (empty for Sync: its
	// objects are read when it runs).
	Contexts []hook.BindingContext
}

// String describes the task for logs and queue listings.
func (t task) String() string {
	switch t.Kind {
	case taskGlobalHook:
		return fmt.Sprintf("%s %s:%s", t.Kind, t.Binding, t.Hook.Name)
	case taskRunGroup:
		return fmt.Sprintf("%s %d (converge %d)", t.Kind, t.Group, t.Gen)
	case taskModuleDelete, taskPurge:
		return fmt.Sprintf("%s %s", t.Kind, t.Module)
	case taskHookRun:
		owner := t.Module
		if owner == "" {
			owner = globalOwner
		}
		if t.Sync {
			return fmt.Sprintf("%s %s/%s Synchronization", t.Kind, owner, t.Hook.Name)
		}
		return fmt.Sprintf("%s %s/%s (%d contexts)", t.Kind, owner, t.Hook.Name, len(t.Contexts))
	default:
		return string(t.Kind)
	}
}

// isKind matches queued tasks of a kind, for deduplication.
func isKind(k taskKind) func(task) bool {
	return func(t task) bool { return t.Kind == k }
}

// globalHookTasks returns one task per global hook with binding b, in order.
func globalHookTasks(hooks []*loadedHook, b hook.Binding) []task {
	sorted := byOrder(hooks, b)
	out := make([]task, 0, len(sorted))
	for _, h := range sorted {
		out = append(out, task{Kind: taskGlobalHook, Hook: h, Binding: b})
	}
	return out
}

// mergeTasks combines consecutive runs of one hook binding into one run
// with all their binding contexts; lifecycle tasks never merge.
func mergeTasks(head, next task) (task, bool) {
	if head.Kind != taskHookRun || next.Kind != taskHookRun || head.Sync || next.Sync ||
		head.Hook != next.Hook || head.Module != next.Module {
		return head, false
	}
	merged := head
	merged.Contexts = append(append([]hook.BindingContext(nil), head.Contexts...), next.Contexts...)
	// The binding id only selects the hook's settings; any of the merged
	// bindings' ids names the same hook.
	return merged, true
}
