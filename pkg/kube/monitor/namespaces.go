package monitor

import (
	"context"
	"log/slog"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// followNamespaces runs a binding with namespace.labelSelector: it watches
// the matching namespaces, syncs the informers of those matching now and
// reports on ready, then starts and stops informers as namespaces start or
// stop matching, until ctx is done. Objects of a namespace that starts to
// match are Added events, those of one that stops matching (or is deleted)
// Deleted events, as the protocol documents ("Added != Object created").
func (mon *monitor) followNamespaces(ctx context.Context, r *monitorRun) {
	dirty := make(chan struct{}, 1)
	namespaces := mon.startNamespaceInformer(ctx, r, dirty)
	if err := waitSynced(ctx, r.errs, r.namespaces.synced); err != nil {
		mon.ready <- monitorReady{err: err}
		return
	}
	ready := mon.syncGroups(ctx, r, mon.spec.matchingNamespaces(namespaces.names()))
	mon.ready <- ready
	if ready.err != nil {
		return
	}
	for {
		select {
		case <-dirty:
			mon.reconcileNamespaces(ctx, r, mon.spec.matchingNamespaces(namespaces.names()))
		case <-ctx.Done():
			return
		}
	}
}

// startNamespaceInformer joins the informer of matching namespaces in
// r.namespaces; it signals dirty on every change. The returned watch
// names the matching namespaces.
func (mon *monitor) startNamespaceInformer(ctx context.Context, r *monitorRun, dirty chan struct{}) *sharedWatch {
	key := watchKey{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, labelSelector: mon.spec.namespaceLabels}
	l := mon.watches.acquire(ctx, key, &namespaceConsumer{mon: mon, dirty: dirty, errs: r.errs})
	r.namespaces = &monitorGroup{leases: []*lease{l}, synced: []<-chan struct{}{l.synced()}}
	return l.watch
}

// namespaceConsumer signals a namespace-following monitor that the set of
// matching namespaces may have changed.
type namespaceConsumer struct {
	mon   *monitor
	dirty chan struct{}
	errs  chan<- error
}

// transform keeps names only.
func (c *namespaceConsumer) transform(_ context.Context, u *unstructured.Unstructured) any {
	return &watchObject{name: u.GetName(), resourceVersion: u.GetResourceVersion()}
}

func (c *namespaceConsumer) notify(context.Context, hook.WatchEvent, any, bool) {
	select {
	case c.dirty <- struct{}{}:
	default: // a reconcile is pending; it reads the names then
	}
}

func (c *namespaceConsumer) watchFailed(synced syncChecker, err error) {
	c.mon.watchFailed(synced, c.errs, err)
}

// reconcileNamespaces makes the informer groups those of the namespaces in
// want: groups of namespaces no longer wanted are stopped and their objects
// dropped (Deleted events), new ones started (Added events).
func (mon *monitor) reconcileNamespaces(ctx context.Context, r *monitorRun, want []string) {
	wanted := make(map[string]bool, len(want))
	for _, ns := range want {
		wanted[ns] = true
	}
	for _, ns := range slices.Sorted(maps.Keys(r.groups)) {
		if wanted[ns] {
			continue
		}
		r.groups[ns].stop()
		delete(r.groups, ns)
		mon.state.dropNamespace(ns)
		mon.log.Debug("namespace stopped matching", slog.String(logkey.Namespace, ns))
	}
	for _, ns := range want {
		if r.groups[ns] == nil {
			r.groups[ns] = mon.startGroup(ctx, ns, true, nil)
			mon.log.Debug("namespace started matching", slog.String(logkey.Namespace, ns))
		}
	}
}
