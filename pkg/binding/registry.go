// Package binding keeps the hooks the operator loaded and the kubernetes
// and schedule bindings it started for them: what each binding id stands
// for, which bindings finished their Synchronization, and each hook's
// execution rate limit.
package binding

import (
	"context"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/time/rate"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// GlobalOwner names global hooks in binding ids.
const GlobalOwner = "global"

// Ref is what a binding id stands for.
type Ref struct {
	Module string // "" for global hooks
	Hook   *Hook
	Kube   *hook.KubernetesBinding // one of Kube and Schedule is set
	Sched  *hook.ScheduleBinding
}

// Name is the binding's name in the hook's configuration.
func (r Ref) Name() string {
	if r.Kube != nil {
		return r.Kube.Name
	}
	return r.Sched.Name
}

// Queue names the queue the binding's runs go to; "" is main.
func (r Ref) Queue() string {
	if r.Kube != nil {
		return r.Kube.Queue
	}
	return r.Sched.Queue
}

// Group names the binding's group, "" when it has none.
func (r Ref) Group() string {
	if r.Kube != nil {
		return r.Kube.Group
	}
	return r.Sched.Group
}

// AllowFailure reports whether a failed run of the binding is only logged.
func (r Ref) AllowFailure() bool {
	if r.Kube != nil {
		return r.Kube.AllowFailure
	}
	return r.Sched.AllowFailure
}

// IncludeSnapshots names the kubernetes bindings whose snapshots the
// binding's runs carry.
func (r Ref) IncludeSnapshots() []string {
	if r.Kube != nil {
		return r.Kube.IncludeSnapshotsFrom
	}
	return r.Sched.IncludeSnapshotsFrom
}

// ID names a binding: owner (module or "global"), hook, kind, index.
func ID(owner string, h *Hook, kind hook.Binding, i int) string {
	return owner + "/" + h.Name + "/" + string(kind) + "/" + strconv.Itoa(i)
}

// Registry maps binding ids to bindings and tracks Synchronization runs.
// Module runs (on the module pool) and the main queue worker register,
// module deletes (on the pool) unregister; event routing and other queues
// read. Its
// methods are safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byID   map[string]Ref
	synced map[string]chan struct{} // closed when the binding's Synchronization completed
	queued map[string]bool          // a Synchronization task is queued on a named queue
	limits map[*Hook]*rate.Limiter
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{byID: map[string]Ref{}, synced: map[string]chan struct{}{}, queued: map[string]bool{}, limits: map[*Hook]*rate.Limiter{}}
}

// Add registers what binding id stands for; a kubernetes binding starts
// unsynchronized.
func (r *Registry) Add(id string, ref Ref) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = ref
	if ref.Kube != nil {
		r.synced[id] = make(chan struct{})
	}
}

// Get returns what binding id stands for.
func (r *Registry) Get(id string) (Ref, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ref, ok := r.byID[id]
	return ref, ok
}

// Remove forgets every binding of owner and returns their ids.
func (r *Registry) Remove(owner string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, ref := range r.byID {
		if ref.Owner() == owner {
			ids = append(ids, id)
			delete(r.byID, id)
			delete(r.synced, id)
			delete(r.queued, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Owner names the binding's owner: its module, or GlobalOwner.
func (r Ref) Owner() string {
	if r.Module == "" {
		return GlobalOwner
	}
	return r.Module
}

// MarkSynced records a completed Synchronization run.
func (r *Registry) MarkSynced(id string) {
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

// IsSynced reports whether binding id completed its Synchronization.
func (r *Registry) IsSynced(id string) bool {
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

// WaitSynced blocks until every id completed its Synchronization.
func (r *Registry) WaitSynced(ctx context.Context, ids []string) error {
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

// MarkQueued records that a Synchronization task for id is on a named
// queue, and reports whether it already was.
func (r *Registry) MarkQueued(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.queued[id]
	r.queued[id] = true
	return was
}

// Limiter returns the hook's token bucket, nil when it is not throttled.
func (r *Registry) Limiter(h *Hook) *rate.Limiter {
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
