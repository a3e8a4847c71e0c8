package kubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RegisterNode creates the Node name whose InternalIP is 127.0.0.1 and
// whose kubelet endpoint is k's port, Ready, as a kubelet registers itself.
func (k *Kubelet) RegisterNode(ctx context.Context, client kubernetes.Interface, name string) error {
	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	node.Status = corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(k.Port)}}, //nolint:gosec // a TCP port fits
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
	}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set status of node %s: %w", name, err)
	}
	return nil
}

// RunPod creates the pod bound to node with one container per name and
// sets its status to Running with every container running and ready.
func RunPod(ctx context.Context, client kubernetes.Interface, node string, pod *corev1.Pod, containers ...string) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	pod.Spec.NodeName = node
	for _, c := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "registry.invalid/" + c})
	}
	created, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	now := metav1.Now()
	created.Status = corev1.PodStatus{
		Phase:      corev1.PodRunning,
		HostIP:     "127.0.0.1",
		PodIP:      "127.0.0.1",
		StartTime:  &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
	}
	for _, c := range containers {
		created.Status.ContainerStatuses = append(created.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c, Ready: true, Image: "registry.invalid/" + c, ImageID: "registry.invalid/" + c,
			ContainerID: "fake://" + containerID(pod.Namespace, pod.Name, c),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	running, err := client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("set status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return running, nil
}
