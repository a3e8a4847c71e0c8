package operatortest

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MakeDeploymentAvailable stands in for the Deployment controller the local
// control plane lacks: it waits for Deployment ns/name to exist and gives
// it the status the controller reports once all replicas are available.
func (h *Harness) MakeDeploymentAvailable(ns, name string) {
	h.T.Helper()
	deps := h.Client.AppsV1().Deployments(ns)
	var d *appsv1.Deployment
	h.Poll("Deployment "+ns+"/"+name, func() bool {
		var err error
		d, err = deps.Get(h.T.Context(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			h.T.Fatalf("get Deployment %s/%s: %v", ns, name, err)
		}
		return err == nil
	})
	n := int32(1)
	if d.Spec.Replicas != nil {
		n = *d.Spec.Replicas
	}
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
	if _, err := deps.UpdateStatus(h.T.Context(), d, metav1.UpdateOptions{}); err != nil {
		h.T.Fatalf("set status of Deployment %s/%s: %v", ns, name, err)
	}
}
