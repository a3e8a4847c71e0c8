package kube

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// TestMonitorMemory measures the heap a monitor of N ConfigMaps of 1 KiB
// data holds, with and without full objects, and, for comparison, what a
// plain dynamic informer holds. The figures are logged, not asserted; only
// their order is.
func TestMonitorMemory(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	e := monitorSetup(t)
	ns := cp.Namespace(t)
	begin := time.Now()
	monitorCreateMany(t, ns, n)
	t.Logf("created %d ConfigMaps in %v", n, time.Since(begin).Round(time.Millisecond))

	binding := func(extra string) hook.KubernetesBinding {
		return monitorBinding(t, `{"kind":"ConfigMap","executeHookOnEvent":[],%s
			"namespace":{"nameSelector":{"matchNames":[%q]}}}`, extra, ns)
	}
	full := monitorHeapOf(t, e, "full", binding(""), n)
	lean := monitorHeapOf(t, e, "lean", binding(`"jqFilter":".metadata.labels","keepFullObjectsInMemory":false,`), n)
	plain := monitorPlainInformerHeap(t, ns, n)
	t.Logf("heap for %d ConfigMaps of 1 KiB: full objects %s, filter results only %s, plain dynamic informer %s",
		n, monitorMiB(full), monitorMiB(lean), monitorMiB(plain))
	if lean >= full {
		t.Errorf("without full objects the monitor holds %s, with them %s; want less", monitorMiB(lean), monitorMiB(full))
	}
}

// monitorHeapOf starts monitor id, measures how much the live heap grew,
// and stops it.
func monitorHeapOf(t *testing.T, e *monitorEnv, id string, b hook.KubernetesBinding, n int) int64 {
	t.Helper()
	// Only the count of Start's list outlives start, so the measurement
	// sees the monitor's own memory.
	start := func() (int, error) {
		objects, err := e.monitors.Start(t.Context(), id, b)
		return len(objects), err
	}
	base := monitorLiveHeap()
	begin := time.Now()
	got, err := start()
	if err != nil {
		t.Fatalf("start %s: %v", id, err)
	}
	synced := time.Since(begin)
	if got != n {
		t.Fatalf("monitor %s synced %d objects, want %d", id, got, n)
	}
	grown := monitorLiveHeap() - base
	t.Logf("monitor %s synced in %v", id, synced.Round(time.Millisecond))
	e.monitors.Stop(id)
	return grown
}

// monitorPlainInformerHeap measures a dynamic informer that keeps the
// objects as client-go decodes them.
func monitorPlainInformerHeap(t *testing.T, ns string, n int) int64 {
	t.Helper()
	e := monitorSetup(t)
	base := monitorLiveHeap()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	inf := dynamicinformer.NewFilteredDynamicInformer(e.dynamic, gvr, ns, 0, cache.Indexers{}, nil).Informer()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("plain informer did not sync")
	}
	if got := len(inf.GetStore().ListKeys()); got != n {
		t.Fatalf("plain informer holds %d objects, want %d", got, n)
	}
	return monitorLiveHeap() - base
}

// monitorLiveHeap returns the bytes of live heap objects after a full GC.
func monitorLiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc) //nolint:gosec // a heap size fits in int64
}

func monitorMiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// monitorCreateMany creates n ConfigMaps with 1 KiB of data each in ns.
func monitorCreateMany(t *testing.T, ns string, n int) {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			name := fmt.Sprintf("cm-%05d", i)
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"monitor-e2e": "memory"}},
				Data:       map[string]string{"payload": strings.Repeat(name[3:], 1024/5+1)[:1024]},
			}
			if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create %s: %w", name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
