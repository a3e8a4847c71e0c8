package server

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/server"
)

// vaultValue stands for a secret in the vault module's values; its chart
// puts it into an object, so that renders hold it too.
const vaultValue = "e2e-vault-7f3a9c-unseal-key"

// writeVaultModule writes a modules directory with the module vault, whose
// values hold vaultValue, and an empty global hooks directory.
func writeVaultModule(t *testing.T) (modulesDir, globalHooksDir string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"modules/010-vault/Chart.yaml":  "apiVersion: v2\nname: vault\nversion: 0.1.0\n",
		"modules/010-vault/values.yaml": "vault:\n  unsealKey: " + vaultValue + "\n",
		"modules/010-vault/templates/unseal.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: vault
data:
  unsealKey: {{ .Values.vault.unsealKey | quote }}
`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "global-hooks"), 0o750); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks")
}

// startVault starts the real operator over the vault module with args and
// waits for its first converge; it returns the base URL of its listener.
func startVault(t *testing.T, h *operatortest.Harness, args ...string) (*operatortest.Operator, string) {
	t.Helper()
	modules, globalHooks := writeVaultModule(t)
	h.SetConfig(map[string]string{"vaultEnabled": "true"})
	addr := operatortest.FreeAddress(t)
	op := h.Start(operatortest.Options{
		ModulesDir: modules, GlobalHooksDir: globalHooks,
		Args: append([]string{"--listen-address=" + addr}, args...), // a later flag wins over the harness's
	})
	h.WaitReady()
	return op, "http://" + addr
}

// getAs GETs url with token as bearer token (none when empty).
func getAs(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// TestDefaultListenerServesNoSecrets starts the real operator with default
// flags: its TCP listener answers no values, config or render request and
// shows the secret nowhere; its socket serves them.
func TestDefaultListenerServesNoSecrets(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	op, base := startVault(t, h)

	for _, path := range []string{
		"/debug/modules/vault/values", "/debug/modules/vault/config", "/debug/modules/vault/render",
		"/debug/global/values", "/debug/global/config", "/debug/modules", "/debug/queues", "/debug/",
	} {
		if code, body := getAs(t, base+path, ""); code != http.StatusNotFound || strings.Contains(body, vaultValue) {
			t.Errorf("GET %s on the TCP listener: %d %q, want 404 without the secret", path, code, body)
		}
	}
	for _, path := range []string{"/", "/metrics", "/metrics/hooks", "/healthz", "/readyz"} {
		code, body := getAs(t, base+path, "")
		if code != http.StatusOK || strings.Contains(body, vaultValue) {
			t.Errorf("GET %s on the TCP listener: %d, secret shown %t; want 200 without the secret", path, code, strings.Contains(body, vaultValue))
		}
	}

	sock := server.NewSocketClient(op.DebugSocket())
	vals, err := sock.ModuleValues(t.Context(), "vault")
	if err != nil || !strings.Contains(fmt.Sprint(vals), vaultValue) {
		t.Errorf("module values over the socket: %v, %v; want the secret", vals, err)
	}
	rendered, err := sock.Render(t.Context(), "vault")
	if err != nil || !strings.Contains(rendered.Manifest, vaultValue) {
		t.Errorf("render over the socket: %v; want the secret in the manifest", err)
	}
}

// TestDebugHTTPNeedsRBAC starts the real operator with --debug-http and
// --metrics-auth: a request without a token gets 401, a ServiceAccount
// token without the RBAC right 403, one with it the values, the render and
// the metrics. Probes and the status page stay open.
func TestDebugHTTPNeedsRBAC(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	reader := serviceAccountToken(t, h.Namespace, "reader")
	stranger := serviceAccountToken(t, h.Namespace, "stranger")
	grantDebugReader(t, h.Namespace, "reader")
	_, base := startVault(t, h, "--debug-http", "--metrics-auth")

	tests := []struct {
		path, token string
		wantCode    int
		wantBody    string // a substring
	}{
		{"/debug/modules/vault/values", "", http.StatusUnauthorized, "Unauthorized"},
		{"/debug/modules/vault/values", "not-a-token", http.StatusUnauthorized, "Unauthorized"},
		{"/debug/modules/vault/values", stranger, http.StatusForbidden, `"system:serviceaccount:` + h.Namespace + `:stranger" may not get /debug/modules/vault/values`},
		{"/debug/modules/vault/render", stranger, http.StatusForbidden, "Forbidden"},
		{"/debug/modules/vault/values", reader, http.StatusOK, vaultValue},
		{"/debug/modules/vault/render", reader, http.StatusOK, vaultValue},
		{"/debug/pprof/", reader, http.StatusNotFound, ""},
		{"/metrics", "", http.StatusUnauthorized, "Unauthorized"},
		{"/metrics", stranger, http.StatusForbidden, "Forbidden"},
		{"/metrics", reader, http.StatusOK, "addon_operator_"},
		{"/metrics/hooks", reader, http.StatusOK, ""},
		{"/healthz", "", http.StatusOK, "ok"},
		{"/readyz", "", http.StatusOK, "ok"},
		{"/", "", http.StatusOK, "vault"},
	}
	for _, tt := range tests {
		code, body := getAs(t, base+tt.path, tt.token)
		if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
			t.Errorf("GET %s as %s: %d %q, want %d with %q", tt.path, who(tt.token, reader, stranger), code, body, tt.wantCode, tt.wantBody)
		}
		if code != http.StatusOK && strings.Contains(body, vaultValue) {
			t.Errorf("GET %s as %s: the refusal shows the secret", tt.path, who(tt.token, reader, stranger))
		}
	}
}

func who(token, reader, stranger string) string {
	switch token {
	case "":
		return "nobody"
	case reader:
		return "reader"
	case stranger:
		return "stranger"
	default:
		return "a forged token"
	}
}

// serviceAccountToken creates the ServiceAccount name in ns and returns a
// token of it from the TokenRequest API.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	client := cp.Clientset(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(t.Context(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount %s: %v", name, err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s: %v", name, err)
	}
	return tr.Status.Token
}

// grantDebugReader lets the ServiceAccount name in ns get the debug API
// and the metrics, and waits until the API server's authorizer says so:
// the operator caches denials.
func grantDebugReader(t *testing.T, ns, name string) {
	t.Helper()
	grantNonResource(t, ns, name, "/metrics", "/metrics/hooks", "/debug/*")
}

// TestListenTLS starts the real operator with --listen-tls and
// --metrics-auth: the token and the metrics travel over TLS, plain HTTP
// gets nothing.
func TestListenTLS(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	reader := serviceAccountToken(t, h.Namespace, "reader")
	grantDebugReader(t, h.Namespace, "reader")
	_, base := startVault(t, h, "--listen-tls", "--metrics-auth", "--debug-http")
	secure := "https://" + strings.TrimPrefix(base, "http://")
	client := &http.Client{Timeout: operatortest.Timeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // G402: the certificate is self-signed by design
	}}
	get := func(url, token string) (int, string, *tls.ConnectionState) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body), resp.TLS
	}
	if code, body, state := get(secure+"/metrics", reader); code != http.StatusOK || state == nil || !strings.Contains(body, "addon_operator_") {
		t.Errorf("GET /metrics over TLS with the reader's token: %d, TLS %t", code, state != nil)
	}
	if code, body, _ := get(secure+"/debug/modules/vault/values", reader); code != http.StatusOK || !strings.Contains(body, vaultValue) {
		t.Errorf("GET values over TLS with the reader's token: %d %q", code, body)
	}
	if code, _, _ := get(secure+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics over TLS without a token: %d, want 401", code)
	}
	// In clear, Go's TLS server answers 400 and hangs up, so the answer
	// may be cut off: whatever arrives holds no metrics.
	code, body, err := operatortest.HTTPGet(t, base+"/metrics")
	if (err == nil && code != http.StatusBadRequest) || strings.Contains(body, "addon_operator_") {
		t.Errorf("GET /metrics in clear: %d, %v, want 400 or a cut connection, without metrics", code, err)
	}
}
