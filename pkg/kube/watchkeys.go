package kube

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// WatchKeys calls notify with the "namespace/name" key of every object of
// resource in namespace ("" for all namespaces) when it is listed, changes
// or goes, and of every object again each resync (0: never), until ctx
// ends. An informer keeps the watch: it lists again when the watch ends
// and backs off while the API server fails. For controllers that read an
// object afresh before acting on it, so only its key matters.
func WatchKeys(ctx context.Context, client dynamic.Interface, resource schema.GroupVersionResource, namespace string,
	resync time.Duration, notify func(key string),
) error {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, resync, namespace, nil)
	inf := factory.ForResource(resource).Informer()
	queue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			notify(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    queue,
		UpdateFunc: func(_, obj any) { queue(obj) },
		DeleteFunc: queue,
	}); err != nil {
		return fmt.Errorf("watch %s: %w", resource.Resource, err)
	}
	inf.RunWithContext(ctx)
	return nil
}
