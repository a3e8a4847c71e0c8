package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestNamespacesEnsure(t *testing.T) {
	existing := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: map[string]string{"team": "a"}}}
	client := fake.NewClientset(existing)
	n := NewNamespaces(client)
	labels := map[string]string{"addon-operator.io/module": "web"}
	for _, name := range []string{"web", "web", "kept"} {
		if err := n.Ensure(t.Context(), name, labels); err != nil {
			t.Fatalf("Ensure %s: %v", name, err)
		}
	}
	for name, want := range map[string]map[string]string{"web": labels, "kept": {"team": "a"}} {
		ns, err := client.CoreV1().Namespaces().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ns.Labels); diff != "" {
			t.Errorf("namespace %s labels (-want +got):\n%s", name, diff)
		}
	}
}
