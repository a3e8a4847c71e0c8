package kube

import (
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

// A Deployment's status updates, the writes controllers make most, are no
// change that may drift it; edits of its spec or labels are.
func TestHealWatcherChangesSkipStatus(t *testing.T) {
	md, err := metadata.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns, client := cp.Namespace(t), cp.Clientset(t)
	changes := make(chan heal.Change, 16)
	w, err := heal.NewWatcher(heal.Options{
		Metadata: md, Kinds: kube.NewDiscovery(disc, 0, nil).Resolver(), Log: slog.New(slog.NewTextHandler(t.Output(), nil)),
		Events: make(chan heal.Event, 16), Changes: changes, ModuleLabel: healModuleLabel, Namespace: ns,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(t.Context()) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("heal watcher: %v", err)
		}
	})

	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{healModuleLabel: "m"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
	deployments := client.AppsV1().Deployments(ns)
	created, err := deployments.Create(t.Context(), deploy, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("m", []heal.ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}})
	if err := w.WaitSynced(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ch := nextChange(t, changes); ch.ResourceVersion != created.ResourceVersion {
		t.Fatalf("first change = %+v, want the listed Deployment at %s", ch, created.ResourceVersion)
	}

	created.Status.Replicas, created.Status.ObservedGeneration = 1, created.Generation
	if _, err := deployments.UpdateStatus(t.Context(), created, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil {
		t.Fatal(err)
	}
	latest, err := deployments.Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	latest.Labels["edited"] = "by-hand"
	edited, err := deployments.Update(t.Context(), latest, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
	if err != nil {
		t.Fatal(err)
	}
	// Changes arrive in order: the next one after the status update must
	// be the label edit, so the status update sent none.
	if ch := nextChange(t, changes); ch.ResourceVersion != edited.ResourceVersion || ch.Module != "m" || ch.Object.Namespace != ns {
		t.Errorf("change after a status update and a label edit = %+v, want the edit at %s", ch, edited.ResourceVersion)
	}
}

func nextChange(t *testing.T, changes <-chan heal.Change) heal.Change {
	t.Helper()
	select {
	case ch := <-changes:
		return ch
	case <-time.After(healTimeout):
		t.Fatal("no change")
		return heal.Change{}
	}
}
