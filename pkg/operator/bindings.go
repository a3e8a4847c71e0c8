package operator

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/runner"
)

// monitors runs informers for kubernetes bindings; *monitor.Monitors is the
// real one.
type monitors interface {
	Run(ctx context.Context) error
	Start(ctx context.Context, id string, b hook.KubernetesBinding) ([]hook.FilteredObject, error)
	EnableEvents(id string)
	// SyncObjects returns the objects for a Synchronization run happening
	// now, and drops events held so far, which the objects reflect.
	SyncObjects(id string) []hook.FilteredObject
	Snapshot(id string) []hook.FilteredObject
	Stop(id string)
}

// scheduler ticks schedule bindings; *schedule.Scheduler is the real one.
type scheduler interface {
	Run(ctx context.Context) error
	Add(id, crontab string) error
	Remove(id string)
}

// objectPatcher applies hooks' object operations; *patch.Patcher is the
// real one.
type objectPatcher interface {
	Apply(ctx context.Context, ops []operation.Operation) error
}

// startBindings starts the monitors and schedules of hooks owned by owner
// ("global" or a module name) and returns the ids of kubernetes bindings,
// in hook path order. Bindings already started are skipped, so a retry
// resumes where a failure stopped.
func (o *Operator) startBindings(ctx context.Context, owner string, hooks []*binding.Hook) ([]string, error) {
	module := owner
	if owner == binding.GlobalOwner {
		module = ""
	}
	var kubeIDs []string
	for _, h := range hooks {
		for i := range h.Config.Kubernetes {
			b := &h.Config.Kubernetes[i]
			id := binding.ID(owner, h, hook.Kubernetes, i)
			kubeIDs = append(kubeIDs, id)
			if _, ok := o.bindings.Get(id); ok {
				continue
			}
			if _, err := o.monitors.Start(ctx, id, *b); err != nil {
				return nil, fmt.Errorf("%s hook %s: kubernetes binding %q: %w", owner, h.Name, b.Name, err)
			}
			o.bindings.Add(id, binding.Ref{Module: module, Hook: h, Kube: b})
		}
		for i := range h.Config.Schedules {
			s := &h.Config.Schedules[i]
			id := binding.ID(owner, h, hook.Schedule, i)
			if _, ok := o.bindings.Get(id); ok {
				continue
			}
			o.bindings.Add(id, binding.Ref{Module: module, Hook: h, Sched: s})
			if err := o.scheduler.Add(id, s.Crontab); err != nil {
				return nil, fmt.Errorf("%s hook %s: schedule %q: %w", owner, h.Name, s.Name, err)
			}
		}
	}
	return kubeIDs, nil
}

// stopBindings stops every monitor and schedule of owner and drops its
// queued hook runs from every queue.
func (o *Operator) stopBindings(owner string) {
	for _, id := range o.bindings.Remove(owner) {
		o.monitors.Stop(id)
		o.scheduler.Remove(id)
	}
	for _, s := range o.queues.Snapshots() {
		o.queues.Get(s.Name).Remove(func(t task) bool { return hookRunModule(t) == owner })
	}
}

// hookRunModule names the module of a hook run or Synchronization task;
// "" for global hooks' and every other task.
func hookRunModule(t task) string {
	switch t := t.(type) {
	case hookRunTask:
		return t.module
	case syncTask:
		return t.module
	case startupTask, globalHookTask, convergeTask, convergePlanTask, runModulesTask, moduleDoneTask,
		afterAllTask, convergeDoneTask, moduleDeleteTask, moduleDeletedTask, purgeTask, applyConfigTask, globalBindingsTask:
	}
	return ""
}

// synchronize runs or queues the Synchronization of each binding id: those
// on main run now, in order; the others are queued on their queue, and
// waited for unless the binding says waitForSynchronization: false.
// Consecutive bindings of one hook that share a queue and both
// Synchronization settings make one run with all their contexts, so a hook
// sees the Synchronization of all its bindings in its first run.
func (o *Operator) synchronize(ctx context.Context, ids []string) error {
	var wait []string
	for _, run := range o.syncRuns(ids) {
		ref := run.ref
		if q := ref.Queue(); q != "" && q != mainQueue {
			var queue []string
			for _, id := range run.ids {
				if !o.bindings.MarkQueued(id) {
					queue = append(queue, id)
				}
			}
			if len(queue) > 0 {
				o.queues.Get(q).PushBack(syncTask{module: ref.Module, hook: ref.Hook, bindingIDs: queue})
			}
			if ref.Kube.WaitForSynchronization {
				wait = append(wait, run.ids...)
			}
			continue
		}
		if err := o.syncRun(ctx, ref.Module, run.ids); err != nil {
			return err
		}
	}
	if len(wait) == 0 {
		return nil
	}
	// A module run's step waits for the other queues without a worker.
	return runner.Park(ctx, func(ctx context.Context) error { return o.bindings.WaitSynced(ctx, wait) })
}

// syncRun is one Synchronization run of a hook: its binding ids, of one
// hook, in order.
type syncRun struct {
	ref binding.Ref
	ids []string
}

// syncRuns groups the ids still to synchronize into runs: consecutive ids
// of one hook join a run when queue, waitForSynchronization and
// executeHookOnSynchronization match.
func (o *Operator) syncRuns(ids []string) []syncRun {
	var runs []syncRun
	for _, id := range ids {
		ref, ok := o.bindings.Get(id)
		if !ok || o.bindings.IsSynced(id) {
			continue
		}
		if n := len(runs); n > 0 && sameSyncRun(runs[n-1].ref, ref) {
			runs[n-1].ids = append(runs[n-1].ids, id)
			continue
		}
		runs = append(runs, syncRun{ref: ref, ids: []string{id}})
	}
	return runs
}

func sameSyncRun(a, b binding.Ref) bool {
	return a.Hook == b.Hook && a.Module == b.Module && queueName(a) == queueName(b) &&
		a.Kube.WaitForSynchronization == b.Kube.WaitForSynchronization &&
		a.Kube.ExecuteHookOnSynchronization == b.Kube.ExecuteHookOnSynchronization
}

// queueName is the queue a binding's runs go to.
func queueName(r binding.Ref) string {
	if q := r.Queue(); q != "" {
		return q
	}
	return mainQueue
}
