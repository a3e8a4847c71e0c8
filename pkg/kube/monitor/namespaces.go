package monitor

import (
	"context"
	"log/slog"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

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
	store := mon.startNamespaceInformer(ctx, r, dirty)
	if err := waitSynced(ctx, r.errs, r.namespaces.synced); err != nil {
		mon.ready <- monitorReady{err: err}
		return
	}
	ready := mon.syncGroups(ctx, r, mon.spec.matchingNamespaces(store.ListKeys()))
	mon.ready <- ready
	if ready.err != nil {
		return
	}
	for {
		select {
		case <-dirty:
			mon.reconcileNamespaces(ctx, r, mon.spec.matchingNamespaces(store.ListKeys()))
		case <-ctx.Done():
			return
		}
	}
}

// startNamespaceInformer starts the informer of matching namespaces in
// r.namespaces; it signals dirty on every change. The returned store is
// keyed by namespace name.
func (mon *monitor) startNamespaceInformer(ctx context.Context, r *monitorRun, dirty chan struct{}) cache.Store {
	ctx, cancel := context.WithCancel(ctx)
	r.namespaces = &monitorGroup{cancel: cancel}
	signal := func() {
		select {
		case dirty <- struct{}{}:
		default: // a reconcile is pending; it reads the store then
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(_, _ any) { signal() },
		DeleteFunc: func(any) { signal() },
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	inf := newInformer(mon.dynamic, gvr, "", metav1.ListOptions{LabelSelector: mon.spec.namespaceLabels})
	synced := mon.startInformer(ctx, &r.namespaces.wg, inf, monIdentity, handler, r.errs)
	r.namespaces.synced = []<-chan struct{}{synced}
	return inf.GetStore()
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

// monIdentity is the transform of the namespace informer, which needs only
// names.
func monIdentity(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	return &monitorEntry{namespace: u.GetNamespace(), name: u.GetName(), resourceVersion: u.GetResourceVersion()}, nil
}
