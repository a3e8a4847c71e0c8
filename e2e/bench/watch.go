package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// errWatchClosed is returned when the API server ends a watch early.
var errWatchClosed = errors.New("watch closed by the API server")

// timeUntil watches the ConfigMap ns/name from its current resource
// version, runs act, and returns how long after act started an event that
// cond accepts arrived. Watching from a resource version taken before act
// means no event is missed and no polling is needed.
func timeUntil(ctx context.Context, client kubernetes.Interface, ns, name string,
	act func(context.Context) error, cond func(watch.Event) bool,
) (time.Duration, error) {
	cms := client.CoreV1().ConfigMaps(ns)
	sel := metav1.ListOptions{FieldSelector: "metadata.name=" + name}
	list, err := cms.List(ctx, sel)
	if err != nil {
		return 0, fmt.Errorf("list ConfigMap %s: %w", name, err)
	}
	sel.ResourceVersion = list.ResourceVersion
	w, err := cms.Watch(ctx, sel)
	if err != nil {
		return 0, fmt.Errorf("watch ConfigMap %s: %w", name, err)
	}
	defer w.Stop()
	start := time.Now()
	if err := act(ctx); err != nil {
		return 0, err
	}
	for {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for ConfigMap %s: %w", name, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("wait for ConfigMap %s: %w", name, errWatchClosed)
			}
			if ev.Type == watch.Error {
				return 0, fmt.Errorf("watch ConfigMap %s: %w", name, apierrors.FromObject(ev.Object))
			}
			if cond(ev) {
				return time.Since(start), nil
			}
		}
	}
}

// dataIs accepts an added or modified ConfigMap whose data has want at
// every key given.
func dataIs(want map[string]string) func(watch.Event) bool {
	return func(ev watch.Event) bool {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || ev.Type == watch.Deleted {
			return false
		}
		for k, v := range want {
			if cm.Data[k] != v {
				return false
			}
		}
		return true
	}
}

// dataHasWord accepts an added or modified ConfigMap whose data at key is
// a space-separated list containing word.
func dataHasWord(key, word string) func(watch.Event) bool {
	return func(ev watch.Event) bool {
		cm, ok := ev.Object.(*corev1.ConfigMap)
		return ok && ev.Type != watch.Deleted && slices.Contains(strings.Fields(cm.Data[key]), word)
	}
}

// added accepts the creation of the object.
func added(ev watch.Event) bool { return ev.Type == watch.Added }
