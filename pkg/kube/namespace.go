package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Namespaces creates the namespaces of modules' releases. It never
// deletes one: a namespace may hold what people put there besides the
// release.
type Namespaces struct{ client kubernetes.Interface }

// NewNamespaces returns Namespaces over client.
func NewNamespaces(client kubernetes.Interface) *Namespaces { return &Namespaces{client: client} }

// Ensure creates namespace name with labels when it does not exist; an
// existing one is left as it is. Without the right to read namespaces it
// assumes the namespace exists (granted to the operator by a Role in it):
// a missing one fails the release that needs it.
func (n *Namespaces) Ensure(ctx context.Context, name string, labels map[string]string) error {
	_, err := n.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get namespace %q: %w", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := n.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %q: %w", name, err)
	}
	return nil
}
