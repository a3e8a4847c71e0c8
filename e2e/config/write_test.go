package config_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func getData(t *testing.T, client kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), config.DefaultName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap: %v", err)
	}
	return cm.Data
}

func TestWriteCreatesConfigMap(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	s := config.NewSource(client, ns, "", nil)
	err := s.Write(t.Context(), config.Edit{
		Sections: map[string]values.Values{"global": {"b": "x", "a": 1}, "certManager": {"issuer": map[string]any{"name": "le"}}},
		Enabled:  map[string]*bool{"certManager": new(true)},
	})
	if err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	want := map[string]string{
		"global":             "a: 1\nb: x\n",
		"certManager":        "issuer:\n  name: le\n",
		"certManagerEnabled": "true",
	}
	if diff := cmp.Diff(want, getData(t, client, ns)); diff != "" {
		t.Errorf("created data mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteUpdatesOnlyGivenKeys(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	user := map[string]string{
		"global":              "# the user's comment stays\nclusterName: prod\n",
		"prometheus":          "retention:   7d # odd spacing stays\n",
		"prometheusEnabled":   "true",
		"certManager":         "issuer: le\n",
		"ingressNginx":        "replicas: 2\n",
		"ingressNginxEnabled": "false",
	}
	createConfigMap(t, client, ns, user)
	s := config.NewSource(client, ns, "", nil)
	err := s.Write(t.Context(), config.Edit{
		Sections: map[string]values.Values{"certManager": {"issuer": "self"}, "ingressNginx": nil},
		Enabled:  map[string]*bool{"ingressNginx": nil, "certManager": new(false)},
	})
	if err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	want := map[string]string{
		"global":             user["global"],
		"prometheus":         user["prometheus"],
		"prometheusEnabled":  "true",
		"certManager":        "issuer: self\n",
		"certManagerEnabled": "false",
	}
	if diff := cmp.Diff(want, getData(t, client, ns)); diff != "" {
		t.Errorf("updated data mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteRetriesAfterConcurrentUpdate(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	createConfigMap(t, client, ns, map[string]string{"global": "a: 1\n"})
	racing := &racingClient{Interface: client, interfere: func(ctx context.Context) error {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, config.DefaultName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["prometheusEnabled"] = "true"
		_, err = client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}}
	s := config.NewSource(racing, ns, "", nil)
	if err := s.Write(t.Context(), config.Edit{Sections: map[string]values.Values{"certManager": {"x": 1}}}); err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	if racing.interfereErr != nil {
		t.Fatalf("concurrent update: %v", racing.interfereErr)
	}
	if racing.gets != 2 {
		t.Errorf("Write() read the ConfigMap %d times, want 2: one conflict, one retry", racing.gets)
	}
	want := map[string]string{"global": "a: 1\n", "prometheusEnabled": "true", "certManager": "x: 1\n"}
	if diff := cmp.Diff(want, getData(t, client, ns)); diff != "" {
		t.Errorf("data mismatch, the concurrent update or ours was lost (-want +got):\n%s", diff)
	}
}

func TestWriteComesBackAsEvent(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	createConfigMap(t, client, ns, map[string]string{"global": "a: 1\n", "certManager": "x: 1\n"})
	events := startSource(t, client, ns)
	before := nextGood(t, events).Config

	s := config.NewSource(client, ns, "", nil)
	written := values.Values{"x": 2, "nested": map[string]any{"list": []any{"a", 1.5}}}
	if err := s.Write(t.Context(), config.Edit{Sections: map[string]values.Values{"certManager": written}}); err != nil {
		t.Fatalf("Write() error = %v", err)
	}
	after := nextGood(t, events).Config
	if diff := cmp.Diff(config.Change{ModulesChanged: []string{"certManager"}}, config.Diff(before, after)); diff != "" {
		t.Errorf("change from the write mismatch (-want +got):\n%s", diff)
	}
	if after.Checksum("certManager") != values.Checksum(written) {
		t.Error("the written section read back has another checksum than the values written")
	}
}

// racingClient updates the ConfigMap through interfere right after the
// first Get through it, so the Update that follows hits a real conflict.
type racingClient struct {
	kubernetes.Interface
	interfere    func(ctx context.Context) error
	interfereErr error
	gets         int
}

func (c *racingClient) CoreV1() corev1client.CoreV1Interface {
	return racingCoreV1{CoreV1Interface: c.Interface.CoreV1(), c: c}
}

type racingCoreV1 struct {
	corev1client.CoreV1Interface
	c *racingClient
}

func (r racingCoreV1) ConfigMaps(ns string) corev1client.ConfigMapInterface {
	return racingConfigMaps{ConfigMapInterface: r.CoreV1Interface.ConfigMaps(ns), c: r.c}
}

type racingConfigMaps struct {
	corev1client.ConfigMapInterface
	c *racingClient
}

func (r racingConfigMaps) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	cm, err := r.ConfigMapInterface.Get(ctx, name, opts)
	r.c.gets++
	if r.c.gets == 1 {
		r.c.interfereErr = r.c.interfere(ctx)
	}
	return cm, err
}

func TestWriteNoCreateLeavesADeletedConfigMapDeleted(t *testing.T) {
	ns := cp.Namespace(t)
	client := cp.Clientset(t)
	s := config.NewSource(client, ns, "", nil)
	err := s.Write(t.Context(), config.Edit{Sections: map[string]values.Values{"certManager": {"issuer": "le"}}, NoCreate: true})
	if !errors.Is(err, config.ErrAbsent) {
		t.Fatalf("Write() error = %v, want ErrAbsent", err)
	}
	_, err = client.CoreV1().ConfigMaps(ns).Get(t.Context(), config.DefaultName, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Get() after the write = %v, want NotFound: the ConfigMap must not be recreated", err)
	}
}
