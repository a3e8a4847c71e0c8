package deckhouse

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// harness runs the operator over a modules tree written by the test.
type harness struct {
	*operatortest.Harness
	dir string
}

func newHarness(t *testing.T, files map[string]string) *harness {
	t.Helper()
	h := &harness{Harness: operatortest.New(t, cp, bin), dir: t.TempDir()}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(h.dir, "modules", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(files[name], "__NS__", h.Namespace)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// start runs the operator with short retry delays; args are extra flags.
func (h *harness) start(args ...string) *operatortest.Operator {
	h.T.Helper()
	return h.Start(operatortest.Options{
		ModulesDir: filepath.Join(h.dir, "modules"),
		Args:       append([]string{"--retry-delay=200ms", "--retry-max-delay=1s"}, args...),
	})
}

// webhookArgs are the flags of a webhook server the API server calls on a
// free loopback port, with webhook configurations named after the
// namespace; they are deleted at cleanup, so that no later request reaches
// a stopped server.
func (h *harness) webhookArgs() []string {
	h.T.Helper()
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(h.T))
	h.T.Cleanup(h.deleteWebhooks)
	return []string{
		"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
		"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
	}
}

func (h *harness) deleteWebhooks() {
	adm := h.Client.AdmissionregistrationV1()
	ctx := context.WithoutCancel(h.T.Context()) // done by now
	_ = adm.ValidatingWebhookConfigurations().Delete(ctx, h.Namespace, metav1.DeleteOptions{})
	_ = adm.MutatingWebhookConfigurations().Delete(ctx, h.Namespace, metav1.DeleteOptions{})
}

// chart adds to files the chart of module name in directory dir: one
// ConfigMap, named after the module, that shows the values it was given
// under key.
func chart(files map[string]string, dir, name, key string) {
	files[dir+"/Chart.yaml"] = "apiVersion: v2\nname: " + name + "\nversion: 1.2.0\n"
	files[dir+"/templates/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n" +
		"  settings: {{ .Values." + key + " | toJson | quote }}\n"
}

// update writes the operator's ConfigMap data and returns the API
// server's answer.
func (h *harness) update(data map[string]string) error {
	h.T.Helper()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(h.T.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		h.T.Fatalf("get ConfigMap: %v", err)
	}
	cm.Data = data
	_, err = cms.Update(h.T.Context(), cm, metav1.UpdateOptions{})
	return err
}
