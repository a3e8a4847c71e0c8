package operator

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/time/rate"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/operation"
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

// globalOwner names global hooks in binding ids.
const globalOwner = "global"

// bindingRef is what a binding id stands for.
type bindingRef struct {
	Module string // "" for global hooks
	Hook   *loadedHook
	Kube   *hook.KubernetesBinding // one of Kube and Schedule is set
	Sched  *hook.ScheduleBinding
}

func (r bindingRef) name() string {
	if r.Kube != nil {
		return r.Kube.Name
	}
	return r.Sched.Name
}

func (r bindingRef) queue() string {
	if r.Kube != nil {
		return r.Kube.Queue
	}
	return r.Sched.Queue
}

func (r bindingRef) group() string {
	if r.Kube != nil {
		return r.Kube.Group
	}
	return r.Sched.Group
}

func (r bindingRef) allowFailure() bool {
	if r.Kube != nil {
		return r.Kube.AllowFailure
	}
	return r.Sched.AllowFailure
}

func (r bindingRef) includeSnapshots() []string {
	if r.Kube != nil {
		return r.Kube.IncludeSnapshotsFrom
	}
	return r.Sched.IncludeSnapshotsFrom
}

// bindingID names a binding: owner (module or "global"), hook, kind, index.
func bindingID(owner string, h *loadedHook, kind hook.Binding, i int) string {
	return owner + "/" + h.Name + "/" + string(kind) + "/" + strconv.Itoa(i)
}

// registry maps binding ids to bindings and tracks Synchronization runs.
// The main queue worker registers and unregisters; event routing and other
// queues read. Guarded by mu.
type registry struct {
	mu     sync.RWMutex
	byID   map[string]bindingRef
	synced map[string]chan struct{} // closed when the binding's Synchronization completed
	queued map[string]bool          // a Synchronization task is queued on a named queue
	limits map[*loadedHook]*rate.Limiter
}

func newRegistry() *registry {
	return &registry{byID: map[string]bindingRef{}, synced: map[string]chan struct{}{}, queued: map[string]bool{}, limits: map[*loadedHook]*rate.Limiter{}}
}

func (r *registry) add(id string, ref bindingRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = ref
	if ref.Kube != nil {
		r.synced[id] = make(chan struct{})
	}
}

func (r *registry) get(id string) (bindingRef, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ref, ok := r.byID[id]
	return ref, ok
}

// remove forgets every binding of owner and returns their ids.
func (r *registry) remove(owner string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, ref := range r.byID {
		if refOwner(ref) == owner {
			ids = append(ids, id)
			delete(r.byID, id)
			delete(r.synced, id)
			delete(r.queued, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func refOwner(ref bindingRef) string {
	if ref.Module == "" {
		return globalOwner
	}
	return ref.Module
}

// markSynced records a completed Synchronization run.
func (r *registry) markSynced(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.synced[id]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

func (r *registry) isSynced(id string) bool {
	r.mu.RLock()
	ch, ok := r.synced[id]
	r.mu.RUnlock()
	if !ok {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitSynced blocks until every id completed its Synchronization.
func (r *registry) waitSynced(ctx context.Context, ids []string) error {
	for _, id := range ids {
		r.mu.RLock()
		ch, ok := r.synced[id]
		r.mu.RUnlock()
		if !ok {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
	return nil
}

// markQueued records that a Synchronization task for id is on a named
// queue, and reports whether it already was.
func (r *registry) markQueued(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.queued[id]
	r.queued[id] = true
	return was
}

// limiter returns the hook's token bucket, nil when it is not throttled.
func (r *registry) limiter(h *loadedHook) *rate.Limiter {
	s := h.Config.Settings
	if s.ExecutionMinInterval <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limits[h]
	if !ok {
		l = rate.NewLimiter(rate.Every(s.ExecutionMinInterval), max(s.ExecutionBurst, 1))
		r.limits[h] = l
	}
	return l
}

// startBindings starts the monitors and schedules of hooks owned by owner
// ("global" or a module name) and returns the ids of kubernetes bindings,
// in hook path order. Bindings already started are skipped, so a retry
// resumes where a failure stopped.
func (o *Operator) startBindings(ctx context.Context, owner string, hooks []*loadedHook) ([]string, error) {
	module := owner
	if owner == globalOwner {
		module = ""
	}
	var kubeIDs []string
	for _, h := range hooks {
		for i := range h.Config.Kubernetes {
			b := &h.Config.Kubernetes[i]
			id := bindingID(owner, h, hook.Kubernetes, i)
			kubeIDs = append(kubeIDs, id)
			if _, ok := o.bindings.get(id); ok {
				continue
			}
			if _, err := o.monitors.Start(ctx, id, *b); err != nil {
				return nil, fmt.Errorf("%s hook %s: kubernetes binding %q: %w", owner, h.Name, b.Name, err)
			}
			o.bindings.add(id, bindingRef{Module: module, Hook: h, Kube: b})
		}
		for i := range h.Config.Schedules {
			s := &h.Config.Schedules[i]
			id := bindingID(owner, h, hook.Schedule, i)
			if _, ok := o.bindings.get(id); ok {
				continue
			}
			o.bindings.add(id, bindingRef{Module: module, Hook: h, Sched: s})
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
	for _, id := range o.bindings.remove(owner) {
		o.monitors.Stop(id)
		o.scheduler.Remove(id)
	}
	for _, s := range o.queues.snapshots() {
		o.queues.get(s.Name).Remove(func(t task) bool { return t.Kind == taskHookRun && t.Module == owner })
	}
}

// syncTask is the Synchronization run of a kubernetes binding; its objects
// are read when it runs.
func syncTask(id string, ref bindingRef) task {
	return task{Kind: taskHookRun, Module: ref.Module, Hook: ref.Hook, BindingID: id, Sync: true}
}

// synchronize runs or queues the Synchronization of each binding id: those
// on main run now, in order; the others are queued on their queue, and
// waited for unless the binding says waitForSynchronization: false.
func (o *Operator) synchronize(ctx context.Context, ids []string) error {
	var wait []string
	for _, id := range ids {
		ref, ok := o.bindings.get(id)
		if !ok || o.bindings.isSynced(id) {
			continue
		}
		t := syncTask(id, ref)
		if q := ref.queue(); q != "" && q != mainQueue {
			if !o.bindings.markQueued(id) {
				o.queues.get(q).PushBack(t)
			}
			if ref.Kube.WaitForSynchronization {
				wait = append(wait, id)
			}
			continue
		}
		if err := o.hookRun(ctx, t); err != nil {
			return err
		}
	}
	return o.bindings.waitSynced(ctx, wait)
}
