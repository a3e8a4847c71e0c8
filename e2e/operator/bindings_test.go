package operator

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchedConfigMap is an object the watcher module's binding selects.
func (h *harness) createWatched(name, value string, labels map[string]string) {
	h.T.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"value": value}}
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Create(h.T.Context(), cm, metav1.CreateOptions{}); err != nil {
		h.T.Fatalf("create ConfigMap %s: %v", name, err)
	}
}

func (h *harness) waitMirrorCount(want string) {
	h.T.Helper()
	h.Poll("watcher-mirror lastCount "+want, func() bool {
		cm, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(h.T.Context(), "watcher-mirror", metav1.GetOptions{})
		return err == nil && cm.Data["lastCount"] == want
	})
}

func TestKubernetesBindingSyncEventsPatchesAndValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	watch := map[string]string{"watch-me": "yes"}
	h.createWatched("before-start", "one", watch)
	h.createWatched("not-selected", "nope", map[string]string{"watch-me": "no"})
	h.SetConfig(map[string]string{"watcherEnabled": "true"})
	h.start()
	trace := startupTrace()
	last := len(trace) - 1
	// Synchronization with the existing object, before beforeHelm (the
	// watcher has no lifecycle hooks, so nothing else of it is traced).
	mark := h.expectTrace(0, append(trace[:last:last], "watcher:Synchronization:one", "global:afterAll")...)
	h.waitMirrorCount("1")

	// An Added event for a new object; the hook's values patch changes
	// watcher.seen, which runs the module (no lifecycle hooks: no trace).
	h.createWatched("after-start", "two", watch)
	mark = h.expectTrace(mark, "watcher:Event:two")
	h.waitMirrorCount("1")

	// A Modified event whose filter result did not change is dropped: only
	// the change of value reaches the hook.
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(t.Context(), "after-start", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations = map[string]string{"touched": "yes"}
	if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm.Data["value"] = "three"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mark = h.expectTrace(mark, "watcher:Event:three")

	// Leaving the label selector is a Deleted event.
	cm, err = cms.Get(t.Context(), "before-start", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels = map[string]string{"watch-me": "no"}
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectTrace(mark, "watcher:Event:one")
	if n := h.CountLog("task failed, will retry", nil) + h.CountLog("module run failed, will retry", nil); n != 0 {
		t.Errorf("%d failures, want none", n)
	}
}

func TestScheduleOnNamedQueueRunsWhileMainIsBusy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// ticker (order 800) starts its schedule, then sleepy (order 900) hangs
	// its first beforeHelm for --hook-timeout, holding main.
	h.SetConfig(map[string]string{"tickerEnabled": "true", "sleepyEnabled": "true"})
	h.start("--hook-timeout=6s")
	h.Poll("sleepy to hang and the ticker to tick three times meanwhile", func() bool {
		tr := h.readTrace()
		i := slices.Index(tr, "sleepy:beforeHelm")
		return i >= 0 && countPrefix(tr[i:], "ticker:Schedule") >= 3 && !slices.Contains(tr[i+1:], "sleepy:beforeHelm")
	})
	// Main was held by the hanging hook all along: afterAll has not run.
	if tr := h.readTrace(); slices.Contains(tr, "global:afterAll") {
		t.Errorf("afterAll ran while main was blocked: %v", tr)
	}
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestSynchronizationOfAllBindingsInOneRun checks that a hook with two
// kubernetes bindings gets one Synchronization run carrying both contexts,
// then one run per event of the binding it matches, with objects as the
// API server sent them (managedFields included).
func TestSynchronizationOfAllBindingsInOneRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"pairEnabled": "true"})
	h.start()
	trace := startupTrace()
	last := len(trace) - 1
	mark := h.expectTrace(0, append(trace[:last:last],
		"pair:Synchronization,Synchronization:created-deleted,labels-modified:plain", "global:afterAll")...)

	h.createWatched("paired", "one", map[string]string{"pair": "yes"})
	mark = h.expectTrace(mark, "pair:Event:created-deleted:managedFields")
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(t.Context(), "paired", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels["tier"] = "db"
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.expectTrace(mark, "pair:Event:labels-modified:managedFields")
}
