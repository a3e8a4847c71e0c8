package catalogue

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runWorkloads stands in for the controllers the local control plane
// lacks: until the test ends, it gives every Deployment and DaemonSet of
// the test's namespace the status their controllers would report once all
// pods are available, so that modules with workloads become ready.
func (h *harness) runWorkloads() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			h.markDeployments(ctx)
			h.markDaemonSets(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	h.T.Cleanup(func() { cancel(); wg.Wait() })
}

func (h *harness) markDeployments(ctx context.Context) {
	deps := h.Client.AppsV1().Deployments(h.Namespace)
	list, err := deps.List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the next tick tries again; the test's own waits report what is missing
	}
	for i := range list.Items {
		d := &list.Items[i]
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == n {
			continue
		}
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		}
		_, _ = deps.UpdateStatus(ctx, d, metav1.UpdateOptions{}) // a conflict is retried on the next tick
	}
}

func (h *harness) markDaemonSets(ctx context.Context) {
	dss := h.Client.AppsV1().DaemonSets(h.Namespace)
	list, err := dss.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		ds := &list.Items[i]
		if ds.Status.ObservedGeneration == ds.Generation && ds.Status.DesiredNumberScheduled > 0 {
			continue
		}
		ds.Status = appsv1.DaemonSetStatus{
			ObservedGeneration: ds.Generation, DesiredNumberScheduled: 1, CurrentNumberScheduled: 1,
			NumberReady: 1, NumberAvailable: 1, UpdatedNumberScheduled: 1,
		}
		_, _ = dss.UpdateStatus(ctx, ds, metav1.UpdateOptions{})
	}
}
