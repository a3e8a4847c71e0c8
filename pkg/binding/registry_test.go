package binding

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

func TestRegistryRemovesByOwnerAndTracksSynchronization(t *testing.T) {
	h := &Hook{Name: "hooks/pods", Config: &hook.Config{
		Kubernetes: []hook.KubernetesBinding{{Name: "pods"}},
		Schedules:  []hook.ScheduleBinding{{Name: "every-minute"}},
	}}
	r := New()
	kubeA, schedA := ID("a", h, hook.Kubernetes, 0), ID("a", h, hook.Schedule, 0)
	kubeGlobal := ID(GlobalOwner, h, hook.Kubernetes, 0)
	r.Add(kubeA, Ref{Module: "a", Hook: h, Kube: &h.Config.Kubernetes[0]})
	r.Add(schedA, Ref{Module: "a", Hook: h, Sched: &h.Config.Schedules[0]})
	r.Add(kubeGlobal, Ref{Hook: h, Kube: &h.Config.Kubernetes[0]})

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := r.WaitSynced(ctx, []string{kubeA}); err == nil {
		t.Error("waited for a Synchronization that never ran")
	}
	r.MarkSynced(kubeA)
	r.MarkSynced(kubeA) // twice is harmless
	if err := r.WaitSynced(t.Context(), []string{kubeA, schedA}); err != nil || !r.IsSynced(kubeA) {
		t.Errorf("after Synchronization: wait %v, synced %v", err, r.IsSynced(kubeA))
	}
	if r.MarkQueued(kubeA) || !r.MarkQueued(kubeA) {
		t.Error("MarkQueued reports whether the id was queued before")
	}
	if diff := cmp.Diff([]string{kubeA, schedA}, r.Remove("a")); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if _, ok := r.Get(kubeGlobal); !ok {
		t.Error("removing a's bindings removed a global one")
	}
}
