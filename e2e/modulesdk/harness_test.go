package modulesdk

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// bigSize is what the batch binary is padded to: above Helm's 5 MiB limit
// for one chart file, as module SDK binaries are (tens of megabytes).
const bigSize = 8 << 20

// harness runs the operator over a modules tree written by the test.
type harness struct {
	*operatortest.Harness
	dir string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{Harness: operatortest.New(t, cp, bin), dir: t.TempDir()}
}

// write writes a file of the modules tree.
func (h *harness) write(name, text string) {
	h.T.Helper()
	path := filepath.Join(h.dir, "modules", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		h.T.Fatal(err)
	}
}

// chart adds the chart of module name in dir (with a Chart.yaml and no
// .helmignore): one ConfigMap, named after the module, with its settings.
func (h *harness) chart(dir, name, key string) {
	h.write(dir+"/Chart.yaml", "apiVersion: v2\nname: "+name+"\nversion: 1.0.0\n")
	h.write(dir+"/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+"\ndata:\n"+
		"  settings: {{ .Values."+key+" | toJson | quote }}\n")
}

// sdkBinary builds testdata/sdkhook into dir/hooks/sdk-hooks, padded to
// bigSize (an ELF executable runs with data after it), and returns its
// path.
func (h *harness) sdkBinary(dir string) string {
	h.T.Helper()
	out := filepath.Join(h.dir, "modules", dir, "hooks", "sdk-hooks")
	cmd := exec.CommandContext(h.T.Context(), "go", "build", "-o", out, "./testdata/sdkhook")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		h.T.Fatalf("build the batch binary: %v\n%s", err, b)
	}
	if err := os.Truncate(out, bigSize); err != nil {
		h.T.Fatal(err)
	}
	return out
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
// namespace; they are deleted at cleanup.
func (h *harness) webhookArgs() []string {
	h.T.Helper()
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(h.T))
	h.T.Cleanup(func() {
		adm := h.Client.AdmissionregistrationV1()
		ctx := context.WithoutCancel(h.T.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(ctx, h.Namespace, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(ctx, h.Namespace, metav1.DeleteOptions{})
	})
	return []string{
		"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
		"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
	}
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
