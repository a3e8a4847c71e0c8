package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// harness runs the operator with its webhook server over a copy of
// testdata in which __GROUP__ and __NS__ name this test's API group and
// namespace, so that tests side by side own distinct CRDs and webhooks.
type harness struct {
	*operatortest.Harness
	dir   string
	group string
	port  string
	dyn   dynamic.Interface
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{Harness: operatortest.New(t, cp, bin), dir: t.TempDir()}
	h.group = h.Namespace + ".e2e.io"
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "testdata")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path) //nolint:gosec // G122: the test's own fixture tree
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		text := strings.NewReplacer("__GROUP__", h.group, "__NS__", h.Namespace).Replace(string(data))
		dst := filepath.Join(h.dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(text), info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
	_, h.port, _ = net.SplitHostPort(operatortest.FreeAddress(t))
	h.dyn, err = dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cleanupCluster)
	return h
}

// start runs the operator with the webhook server on h.port; the API
// server calls it at https://127.0.0.1:<port>.
func (h *harness) start(args ...string) *operatortest.Operator {
	h.T.Helper()
	return h.startOn(h.port, args...)
}

// startOn runs the operator with its webhook server on port; the API
// server still calls h.port.
func (h *harness) startOn(port string, args ...string) *operatortest.Operator {
	h.T.Helper()
	return h.Start(operatortest.Options{
		ModulesDir:     filepath.Join(h.dir, "modules"),
		GlobalHooksDir: filepath.Join(h.dir, "global-hooks"),
		Args: append([]string{
			"--retry-delay=200ms", "--retry-max-delay=1s",
			"--webhook-server", "--webhook-url=https://127.0.0.1:" + h.port,
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
			"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
			"--webhook-cert-check-interval=2s",
		}, args...),
	})
}

// cleanupCluster deletes the cluster-scoped objects the test made: its
// webhook configurations (so no later request reaches a stopped server)
// and its CRD.
func (h *harness) cleanupCluster() {
	adm := h.Client.AdmissionregistrationV1()
	bg := context.WithoutCancel(h.T.Context()) // done by now
	deleteOpts := metav1.DeleteOptions{}
	_ = adm.ValidatingWebhookConfigurations().Delete(bg, h.Namespace, deleteOpts)
	_ = adm.MutatingWebhookConfigurations().Delete(bg, h.Namespace, deleteOpts)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	_ = h.dyn.Resource(crds).Delete(bg, "things."+h.group, deleteOpts)
}

// things is the Things resource at version v.
func (h *harness) things(v string) dynamic.ResourceInterface {
	return h.dyn.Resource(schema.GroupVersionResource{Group: h.group, Version: v, Resource: "things"}).Namespace(h.Namespace)
}

// servedSerial returns the serial number of the certificate the webhook
// server presents now.
func (h *harness) servedSerial() (string, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only reads which certificate is served
	conn, err := d.DialContext(h.T.Context(), "tcp", "127.0.0.1:"+h.port)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", fmt.Errorf("no certificate")
	}
	return certs[0].SerialNumber.String(), nil
}
