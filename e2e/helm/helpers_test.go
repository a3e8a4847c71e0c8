package helm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// apply runs Apply and fails the test on error.
func apply(t *testing.T, c *helm.Client, r helm.Release) helm.Outcome {
	t.Helper()
	out, err := c.Apply(t.Context(), r)
	if err != nil {
		t.Fatalf("apply %s: %v", r.Name, err)
	}
	return out
}

// configMap returns the ConfigMap ns/name, failing the test when it cannot
// be read.
func configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

// checkObjectLabels checks the labels every rendered object carries.
func checkObjectLabels(t *testing.T, what string, labels map[string]string) {
	t.Helper()
	if labels[helm.LabelManagedBy] != helm.ManagedByValue || labels[helm.LabelModule] != "echo" {
		t.Errorf("%s labels = %v, want %s=%s and %s=echo", what, labels, helm.LabelManagedBy, helm.ManagedByValue, helm.LabelModule)
	}
}

// configMapsLabelled returns the names of the ConfigMaps in ns that
// selector selects.
func configMapsLabelled(t *testing.T, ns, selector string) []string {
	t.Helper()
	list, err := cp.Clientset(t).CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list ConfigMaps -l %s: %v", selector, err)
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		names = append(names, list.Items[i].Name)
	}
	return names
}

// eventually polls check until it returns nil or waitTimeout passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		select {
		case <-tick.C:
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		}
	}
}

// gone returns a check that the object get reads is absent.
func gone(get func() error) func() error {
	return func() error {
		err := get()
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still exists")
	}
}

// helmConfig is a plain Helm configuration for ns, for what the tests do
// behind the Client's back.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	flags.Namespace = &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatalf("init helm: %v", err)
	}
	return cfg
}

// manifestConfigMap finds ConfigMap name in a multi-document manifest.
func manifestConfigMap(t *testing.T, manifest, name string) *corev1.ConfigMap {
	t.Helper()
	for doc := range strings.SplitSeq(manifest, "\n---\n") {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
			continue
		}
		if cm.Kind == "ConfigMap" && cm.Name == name {
			return &cm
		}
	}
	t.Fatalf("no ConfigMap %s in the manifest:\n%s", name, manifest)
	return nil
}

// createUnstructured creates obj as resource gvr; an object left by an
// earlier run of the test is fine.
func createUnstructured(t *testing.T, gvr schema.GroupVersionResource, obj map[string]any) {
	t.Helper()
	client, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Resource(gvr).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
}
