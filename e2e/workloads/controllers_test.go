package workloads

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// podTemplate is a Pod template labelled app=name with one container; its
// annotations tell the simulated node how to treat the Pod.
func podTemplate(name string, restart corev1.RestartPolicy, annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers:    []corev1.Container{{Name: "main", Image: "registry.example/" + name + ":1"}},
		},
	}
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name, corev1.RestartPolicyAlways, nil),
		},
	}
}

func job(name string, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template:     podTemplate(name, corev1.RestartPolicyNever, annotations),
		},
	}
}

// deploymentAvailable reports whether Deployment ns/name has its Available
// condition true with all its replicas available.
func deploymentAvailable(t *testing.T, client kubernetes.Interface, ns, name string) bool {
	t.Helper()
	d, err := client.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Deployment %s/%s: %v", ns, name, err)
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.AvailableReplicas == ptr.Deref(d.Spec.Replicas, 1)
		}
	}
	return false
}

// jobCondition returns the type of Job ns/name's terminal condition
// (Complete or Failed) once it has one, else "".
func jobCondition(t *testing.T, client kubernetes.Interface, ns, name string) batchv1.JobConditionType {
	t.Helper()
	j, err := client.BatchV1().Jobs(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Job %s/%s: %v", ns, name, err)
	}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

func pods(t *testing.T, client kubernetes.Interface, ns, app string) []corev1.Pod {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatalf("list Pods of %s in %s: %v", app, ns, err)
	}
	return list.Items
}

func gone(t *testing.T, err error, what string) bool {
	t.Helper()
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("get %s: %v", what, err)
	}
	return apierrors.IsNotFound(err)
}

func TestDeploymentBecomesAvailableAfterPodStartDelay(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if _, err := client.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if _, err := client.AppsV1().Deployments(ns).Create(t.Context(), deployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "Deployment web to be available", func() bool { return deploymentAvailable(t, client, ns, "web") })
	if took := time.Since(created); took < podStartDelay {
		t.Errorf("Deployment available %s after it was created, before the pod start delay of %s", took, podStartDelay)
	}

	for _, p := range pods(t, client, ns, "web") {
		if !strings.HasPrefix(p.Spec.NodeName, "kwok-node-") || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Errorf("Pod %s: node %q, phase %s, IP %q; want scheduled on a simulated node, Running, with an IP",
				p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
	}
	// The EndpointSlice controller publishes the ready Pods behind the
	// Service.
	operatortest.Poll(t, "Service web's EndpointSlice to list 2 ready endpoints", func() bool {
		slices, err := client.DiscoveryV1().EndpointSlices(ns).List(t.Context(),
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
		if err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if ptr.Deref(e.Conditions.Ready, false) {
					ready++
				}
			}
		}
		return ready == 2
	})
}

func TestStatefulSetAndDaemonSetBecomeReady(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: podTemplate("db", corev1.RestartPolicyAlways, nil),
		},
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(t.Context(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: podTemplate("agent", corev1.RestartPolicyAlways, nil),
		},
	}
	if _, err := client.AppsV1().DaemonSets(ns).Create(t.Context(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "StatefulSet db to have 2 ready replicas", func() bool {
		s, err := client.AppsV1().StatefulSets(ns).Get(t.Context(), "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Status.ReadyReplicas == 2 && s.Status.AvailableReplicas == 2
	})
	operatortest.Poll(t, "DaemonSet agent to be ready on every node", func() bool {
		d, err := client.AppsV1().DaemonSets(ns).Get(t.Context(), "agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Status.DesiredNumberScheduled == 1 && d.Status.NumberReady == 1 && d.Status.NumberAvailable == 1
	})
}

func TestJobCompletesOrFailsWithItsExitCode(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	cases := map[string]struct {
		annotations map[string]string
		want        batchv1.JobConditionType
		phase       corev1.PodPhase
	}{
		"succeeds": {want: batchv1.JobComplete, phase: corev1.PodSucceeded},
		"fails":    {annotations: map[string]string{cluster.AnnotationExitCode: "1"}, want: batchv1.JobFailed, phase: corev1.PodFailed},
	}
	for name, c := range cases {
		if _, err := client.BatchV1().Jobs(ns).Create(t.Context(), job(name, c.annotations), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range cases {
		operatortest.Poll(t, "Job "+name+" to finish", func() bool { return jobCondition(t, client, ns, name) != "" })
		if got := jobCondition(t, client, ns, name); got != c.want {
			t.Errorf("Job %s finished %s, want %s", name, got, c.want)
		}
		ps := pods(t, client, ns, name)
		if len(ps) != 1 || ps[0].Status.Phase != c.phase {
			t.Errorf("Job %s's Pods: %d, first phase %v; want one %s", name, len(ps), phases(ps), c.phase)
		}
	}
}

func phases(ps []corev1.Pod) []corev1.PodPhase {
	out := make([]corev1.PodPhase, len(ps))
	for i := range ps {
		out[i] = ps[i].Status.Phase
	}
	return out
}

func TestJobRunsForItsRunDuration(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	j := job("long", map[string]string{cluster.AnnotationRunDuration: "24h", cluster.AnnotationStartDelay: "0s"})
	if _, err := client.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "Job long's Pod to run and be ready", func() bool {
		got, err := client.BatchV1().Jobs(ns).Get(t.Context(), "long", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ptr.Deref(got.Status.Ready, 0) == 1
	})
	ps := pods(t, client, ns, "long")
	if len(ps) != 1 || ps[0].Status.Phase != corev1.PodRunning {
		t.Errorf("Job long's Pods: phases %v; want one Running", phases(ps))
	}
	if got := jobCondition(t, client, ns, "long"); got != "" {
		t.Errorf("Job long finished (%s) within its run duration", got)
	}
}

func TestNamespaceDeletionFinishes(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	if _, err := client.AppsV1().Deployments(ns).Create(t.Context(), deployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "b"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "Deployment web to be available", func() bool { return deploymentAvailable(t, client, ns, "web") })

	if err := client.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "namespace "+ns+" to be gone", func() bool {
		_, err := client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		return gone(t, err, "namespace "+ns)
	})
}

func TestGarbageCollectorDeletesDependents(t *testing.T) {
	t.Parallel()
	client, ns := cp.Clientset(t), cp.Namespace(t)
	owner, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID},
	}}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().Deployments(ns).Create(t.Context(), deployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "Deployment web to be available", func() bool { return deploymentAvailable(t, client, ns, "web") })

	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	if err := client.CoreV1().ConfigMaps(ns).Delete(t.Context(), "owner", background); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "ConfigMap dependent to be collected", func() bool {
		_, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), "dependent", metav1.GetOptions{})
		return gone(t, err, "ConfigMap dependent")
	})

	foreground := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}
	if err := client.AppsV1().Deployments(ns).Delete(t.Context(), "web", foreground); err != nil {
		t.Fatal(err)
	}
	operatortest.Poll(t, "Deployment web, its ReplicaSets and Pods to be gone", func() bool {
		_, err := client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if !gone(t, err, "Deployment web") {
			return false
		}
		rs, err := client.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs.Items) == 0 && len(pods(t, client, ns, "web")) == 0
	})
}
