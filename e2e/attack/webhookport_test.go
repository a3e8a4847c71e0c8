package attack

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// webhookPortClientCA is the CA file of the client certificate the API
// server presents to admission webhooks.
var webhookPortClientCA string //nolint:gochecknoglobals // set once by TestMain, read by tests

// webhookPortMemoryLimit is the chart's memory limit, which the operator's
// peak resident memory must stay under.
const webhookPortMemoryLimit = 512 << 20

// webhookPortAPIServerArgs makes a CA and a client certificate it signed in
// dir, and an AdmissionConfiguration through which the API server presents
// that certificate to every admission webhook; it returns the API server's
// flag.
func webhookPortAPIServerArgs(dir string) ([]string, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "webhook-client-ca"}, caKey)
	if err != nil {
		return nil, fmt.Errorf("webhook client CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	crt, err := webhookPortSign(ca, caKey, &key.PublicKey, "kube-apiserver-webhook-client")
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, err
	}
	crtPEM, err := certutil.EncodeCertificates(crt)
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"webhook-client-ca.crt": string(caPEM),
		"webhook-client.crt":    string(crtPEM),
		"webhook-client.key":    string(keyPEM),
		// "*": every webhook host gets the certificate.
		"webhook-kubeconfig": fmt.Sprintf("apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user:\n    client-certificate: %s\n    client-key: %s\n",
			filepath.Join(dir, "webhook-client.crt"), filepath.Join(dir, "webhook-client.key")),
		"admission.yaml": webhookPortAdmissionConfig(filepath.Join(dir, "webhook-kubeconfig")),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	webhookPortClientCA = filepath.Join(dir, "webhook-client-ca.crt")
	return []string{"--admission-control-config-file=" + filepath.Join(dir, "admission.yaml")}, nil
}

func webhookPortAdmissionConfig(kubeconfig string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n")
	for _, plugin := range []string{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"} {
		fmt.Fprintf(&b, "- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: %s\n", plugin, kubeconfig)
	}
	return b.String()
}

// webhookPortSign issues a client certificate for name, signed by ca.
func webhookPortSign(ca *x509.Certificate, caKey crypto.Signer, pub crypto.PublicKey, name string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return nil, fmt.Errorf("webhook client certificate: %w", err)
	}
	return x509.ParseCertificate(der)
}

// webhookPortGuardHook is a mutating hook on the test namespace's
// ConfigMaps labelled webhookport=real: it refuses those whose data says
// verdict=deny and labels the others vetted=yes. Its failure policy is
// Ignore: a request that gets no answer stores the object unchecked. Its
// timeout is generous, since the attack's own TLS handshakes share the
// test machine's cores with the operator: what is tested is the decision.
const webhookPortGuardHook = `#!/usr/bin/env bash
set -euo pipefail
if [[ "${1:-}" == --config ]]; then
  cat <<YAML
configVersion: v1
kubernetesMutating:
- name: __NAME__
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}
  namespace: {labelSelector: {matchLabels: {kubernetes.io/metadata.name: __NS__}}}
  labelSelector: {matchLabels: {webhookport: real}}
  failurePolicy: Ignore
  timeoutSeconds: 15
YAML
  exit 0
fi
verdict=$(jq -r '.[0].review.request.object.data.verdict // ""' "$BINDING_CONTEXT_PATH")
if [[ "$verdict" == deny ]]; then
  echo '{"allowed": false, "message": "refused by the guard"}' > "$ADMISSION_RESPONSE_PATH"
else
  patch=$(printf '[{"op": "add", "path": "/metadata/labels/vetted", "value": "yes"}]' | base64 -w0)
  echo "{\"allowed\": true, \"patch\": \"$patch\"}" > "$ADMISSION_RESPONSE_PATH"
fi
`

// webhookPortSetup is one test's operator with its webhook server.
type webhookPortSetup struct {
	h    *operatortest.Harness
	op   *operatortest.Operator
	addr string // host:port of the webhook server
	name string // the guard's webhook name
}

// webhookPortStart runs the operator with the guard module and its webhook
// server on a port of its own, the API server calling it there; args are
// more flags.
func webhookPortStart(t *testing.T, args ...string) *webhookPortSetup {
	t.Helper()
	h := operatortest.New(t, cp, bin)
	s := &webhookPortSetup{h: h, addr: operatortest.FreeAddress(t), name: "guard." + h.Namespace + ".attack.io"}
	dir := t.TempDir()
	hooks := filepath.Join(dir, "modules", "010-guard", "hooks")
	if err := os.MkdirAll(hooks, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "global-hooks"), 0o750); err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer("__NAME__", s.name, "__NS__", h.Namespace).Replace(webhookPortGuardHook)
	if err := os.WriteFile(filepath.Join(hooks, "guard"), []byte(script), 0o700); err != nil { //nolint:gosec // G306: a hook must be executable
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modules", "values.yaml"), []byte("guardEnabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	adm := h.Client.AdmissionregistrationV1()
	t.Cleanup(func() {
		bg := context.WithoutCancel(t.Context())
		_ = adm.MutatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
	})
	_, port, _ := net.SplitHostPort(s.addr)
	h.SetConfig(map[string]string{})
	s.op = h.Start(operatortest.Options{
		ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks"),
		Args: append([]string{
			"--webhook-server", "--webhook-url=https://" + s.addr,
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
			"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
		}, args...),
	})
	h.WaitReady()
	return s
}

// write creates the ConfigMap name through the API server, labelled for
// the guard, with the given verdict.
func (s *webhookPortSetup) write(name, verdict string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"webhookport": "real"}},
		Data:       map[string]string{"verdict": verdict},
	}
	return s.h.Client.CoreV1().ConfigMaps(s.h.Namespace).Create(s.h.T.Context(), cm, metav1.CreateOptions{})
}

// waitGuarding waits until a write is vetted by the guard.
func (s *webhookPortSetup) waitGuarding() {
	i := 0
	s.h.Poll("the guard labels a ConfigMap it allows", func() bool {
		i++
		cm, err := s.write(fmt.Sprintf("warm-%d", i), "allow")
		return err == nil && cm.Labels["vetted"] == "yes"
	})
}

// peakMemory returns the operator's peak resident memory (VmHWM), found by
// its debug socket on its command line.
func (s *webhookPortSetup) peakMemory(t *testing.T) int64 {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := "--debug-socket=" + s.op.DebugSocket()
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), want) {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					t.Fatalf("VmHWM %q: %v", v, err)
				}
				return kb << 10
			}
		}
	}
	t.Fatal("the operator's process was not found")
	return 0
}

// webhookPortAttacker is a client without a client certificate that does
// not check the server's either.
func webhookPortAttacker(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the attacker does not care whom it talks to
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
	}}
}

// webhookPortReview is a forged AdmissionReview creating a ConfigMap of
// size bytes in ns that the guard would allow.
func webhookPortReview(t *testing.T, ns string, size int) []byte {
	t.Helper()
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "forged", "namespace": ns, "labels": map[string]string{"webhookport": "real"}},
		"data":     map[string]string{"verdict": "allow", "pad": strings.Repeat("x", size)},
	}
	review := map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": "00000000-0000-0000-0000-000000000000", "operation": "CREATE", "namespace": ns, "name": "forged",
			"kind":     map[string]string{"group": "", "version": "v1", "kind": "ConfigMap"},
			"resource": map[string]string{"group": "", "version": "v1", "resource": "configmaps"},
			"userInfo": map[string]any{"username": "attacker"}, "object": obj,
		},
	}
	data, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// webhookPortPost sends body to path; it returns the status code, 0 with
// the error when there is no answer.
func webhookPortPost(t *testing.T, c *http.Client, addr, path string, body io.Reader, length int64) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+addr+path, body)
	if err != nil {
		return 0, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// webhookPortStatuses counts the answers of concurrent requests.
type webhookPortStatuses struct {
	mu     sync.Mutex
	counts map[int]int
	errs   []error
}

func (c *webhookPortStatuses) add(code int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[int]int{}
	}
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	c.counts[code]++
}

// TestAttackerFloodsWebhookPortWithForgedReviews: with client-certificate
// authentication on, 600 concurrent clients without a certificate send
// forged AdmissionReviews to the guard's path while five real writes go
// through the API server. Every real write is decided by the guard (refused
// or labelled, none stored unchecked through the Ignore policy), no forged
// review runs the hook, and the operator stays under the chart's memory
// limit.
func TestAttackerFloodsWebhookPortWithForgedReviews(t *testing.T) {
	t.Parallel()
	s := webhookPortStart(t, "--webhook-client-ca="+webhookPortClientCA)
	s.waitGuarding()

	const clients, perClient = 600, 5
	body := webhookPortReview(t, s.h.Namespace, 64<<10)
	attacker := webhookPortAttacker(clients)
	defer attacker.CloseIdleConnections()
	var forged webhookPortStatuses
	var wg sync.WaitGroup
	started := make(chan struct{})
	var startOnce sync.Once
	for range clients {
		wg.Go(func() {
			for range perClient {
				code, err := webhookPortPost(t, attacker, s.addr, "/mutate/"+s.name, bytes.NewReader(body), int64(len(body)))
				startOnce.Do(func() { close(started) })
				forged.add(code, err)
			}
		})
	}
	<-started

	type outcome struct {
		cm  *corev1.ConfigMap
		err error
	}
	outcomes := make([]outcome, 5)
	var writes sync.WaitGroup
	for i := range outcomes {
		writes.Go(func() {
			verdict := map[bool]string{true: "deny", false: "allow"}[i%2 == 0]
			cm, err := s.write(fmt.Sprintf("real-%d-%s", i, verdict), verdict)
			outcomes[i] = outcome{cm, err}
		})
	}
	writes.Wait()
	wg.Wait()

	for i, o := range outcomes {
		switch {
		case i%2 == 0 && o.err == nil:
			t.Errorf("real write %d (deny) was stored, labels %v: the guard was skipped", i, o.cm.Labels)
		case i%2 == 0 && !strings.Contains(o.err.Error(), "refused by the guard"):
			t.Errorf("real write %d (deny): %v, want the guard's refusal", i, o.err)
		case i%2 == 1 && o.err != nil:
			t.Errorf("real write %d (allow): %v", i, o.err)
		case i%2 == 1 && o.cm.Labels["vetted"] != "yes":
			t.Errorf("real write %d (allow) stored with labels %v, without the guard's vetted=yes: the guard was skipped", i, o.cm.Labels)
		}
	}
	if n := forged.counts[http.StatusOK]; n > 0 {
		t.Errorf("%d forged reviews were answered by the hook; answers %v", n, forged.counts)
	}
	t.Logf("forged reviews: answers %v, %d without answer", forged.counts, len(forged.errs))
	if peak := s.peakMemory(t); peak >= webhookPortMemoryLimit {
		t.Errorf("the operator's peak resident memory is %d MiB, at or above the chart's limit of 512 MiB", peak>>20)
	} else {
		t.Logf("the operator's peak resident memory: %d MiB", peak>>20)
	}
}

// TestAttackerSendsOversizedReviews: a client that reaches the port sends
// 10 MiB bodies, declared and chunked, and then many concurrent bodies
// just under the bound. The oversized ones are refused unread (413, 411
// without a length), and the operator's memory stays bounded.
func TestAttackerSendsOversizedReviews(t *testing.T) {
	t.Parallel()
	s := webhookPortStart(t)
	attacker := webhookPortAttacker(64)
	defer attacker.CloseIdleConnections()
	huge := make([]byte, 10<<20)

	var declared, chunked webhookPortStatuses
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			declared.add(webhookPortPost(t, attacker, s.addr, "/mutate/"+s.name, bytes.NewReader(huge), int64(len(huge))))
		})
		wg.Go(func() {
			// Not a *bytes.Reader and no length: sent chunked.
			chunked.add(webhookPortPost(t, attacker, s.addr, "/mutate/"+s.name, io.MultiReader(bytes.NewReader(huge)), -1))
		})
	}
	wg.Wait()
	// The server answers before the body is sent; a client may see its
	// write fail instead of the answer.
	for _, c := range []struct {
		what   string
		got    *webhookPortStatuses
		status int
	}{{"with a length", &declared, http.StatusRequestEntityTooLarge}, {"without a length", &chunked, http.StatusLengthRequired}} {
		if c.got.counts[c.status] == 0 || len(c.got.counts) != 1 {
			t.Errorf("10 MiB bodies %s: answers %v (%d without answer: %v), want %d only", c.what, c.got.counts, len(c.got.errs), c.got.errs, c.status)
		}
	}

	// Within the bound: read and decoded, for a webhook not served (404),
	// or turned away while the in-flight budget is spent (429).
	const concurrent = 48
	nearBound := webhookPortReview(t, s.h.Namespace, 6<<20+512<<10)
	var within webhookPortStatuses
	for range concurrent {
		wg.Go(func() {
			within.add(webhookPortPost(t, attacker, s.addr, "/validate/absent.attack.io", bytes.NewReader(nearBound), int64(len(nearBound))))
		})
	}
	wg.Wait()
	if n := within.counts[http.StatusNotFound] + within.counts[http.StatusTooManyRequests]; n != concurrent || within.counts[http.StatusNotFound] == 0 {
		t.Errorf("%d bodies of %d bytes: answers %v, errors %v; want 404 or 429 each, some 404", concurrent, len(nearBound), within.counts, within.errs)
	}
	peak := s.peakMemory(t)
	t.Logf("answers %v; the operator's peak resident memory: %d MiB", within.counts, peak>>20)
	if peak >= webhookPortMemoryLimit {
		t.Errorf("the operator's peak resident memory is %d MiB, at or above the chart's limit of 512 MiB", peak>>20)
	}
	s.waitGuarding()
}
