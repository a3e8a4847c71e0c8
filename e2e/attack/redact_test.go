package attack

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// The secrets the charts below get rejected with. redactSecretValue is
// only ever in a Secret of the release (its stringData) and, by a chart
// author's mistake, in a label the API server refuses and quotes;
// redactSensitiveValue is a configuration value the module's schema marks
// x-sensitive, quoted the same way from a ConfigMap's label.
const (
	redactSecretValue    = "AKIA/leaked+secret=Tok3n" //nolint:gosec // G101: a made-up secret the test looks for
	redactSensitiveValue = "Pa55/w0rd+from=config"
)

// redactWrite writes a file under dir, making its directories.
func redactWrite(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// redactModules writes two modules whose releases the API server rejects
// with an error quoting a secret: redact-secret (a Secret's value) and
// redact-sensitive (an x-sensitive configuration value).
func redactModules(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "modules")
	redactWrite(t, dir, "010-redact-secret/Chart.yaml", "apiVersion: v2\nname: redact-secret\nversion: 1.0.0\n")
	redactWrite(t, dir, "010-redact-secret/templates/secret.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: redact-secret-creds
  labels:
    api-key: `+redactSecretValue+`
stringData:
  apiKey: `+redactSecretValue+`
`)
	redactWrite(t, dir, "020-redact-sensitive/Chart.yaml", "apiVersion: v2\nname: redact-sensitive\nversion: 1.0.0\n")
	redactWrite(t, dir, "020-redact-sensitive/openapi/config-values.yaml",
		"type: object\nproperties:\n  password:\n    type: string\n    x-sensitive: true\n")
	redactWrite(t, dir, "020-redact-sensitive/templates/configmap.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: redact-sensitive-settings
  labels:
    password: {{ .Values.redactSensitive.password | quote }}
data:
  mode: fast
`)
	return dir
}

// redactCheck fails when text shows either secret.
func redactCheck(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range []string{redactSecretValue, redactSensitiveValue} {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the secret %q:\n%s", where, s, text)
		}
	}
}

// TestAttackerReadsRejectedSecretFromErrorTexts: a module's chart is
// rejected by the API server with an error that quotes a Secret's value
// and an x-sensitive configuration value. Whoever may read Module objects,
// Events, the status page or /metrics (none of which needs the right to
// read Secrets) must not find either value there.
func TestAttackerReadsRejectedSecretFromErrorTexts(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := operatortest.New(t, cp, bin)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	h.SetConfig(map[string]string{
		"redactSecretEnabled": "true", "redactSensitiveEnabled": "true",
		"redactSensitive": "password: " + redactSensitiveValue + "\n",
	})
	op := h.Start(operatortest.Options{ModulesDir: redactModules(t), GlobalHooksDir: t.TempDir(),
		Args: []string{"--retry-delay=500ms", "--retry-max-delay=2s"}})

	// Both modules fail on the API server's refusal; their Module objects
	// say so.
	lastErrors := map[string]string{}
	for _, name := range []string{"redact-secret", "redact-sensitive"} {
		h.Poll("Module "+name+" shows the API server's refusal", func() bool {
			u, err := dyn.Resource(v1.ModulesResource()).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			msg, _, _ := unstructured.NestedString(u.Object, "status", "lastError")
			lastErrors[name] = msg
			return strings.Contains(msg, "Invalid value")
		})
	}
	for name, msg := range lastErrors {
		redactCheck(t, "Module "+name+" status.lastError", msg)
		if !strings.Contains(msg, "[redacted]") {
			t.Errorf("Module %s status.lastError has no marker where the value was: %s", name, msg)
		}
	}
	u, err := dyn.Resource(v1.ModulesResource()).Get(t.Context(), "redact-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		msg, _ := m["message"].(string)
		redactCheck(t, "a condition of Module redact-secret", msg)
	}

	redactCheckEvents(t, h)

	// The status page, served to this loopback client, and /metrics.
	for _, path := range []string{"/", "/metrics", "/metrics/hooks", "/readyz"} {
		code, body, err := operatortest.HTTPGet(t, op.URL()+path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		if path == "/" && (code != http.StatusOK || !strings.Contains(body, "[redacted]")) {
			t.Errorf("GET /: %d, want 200 with the redacted error:\n%s", code, body)
		}
		redactCheck(t, "GET "+path, body)
	}
	// The debug API's view of the modules.
	mods, err := op.Debug().Modules(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		redactCheck(t, "debug module "+m.Name, m.LastError+" "+m.Message)
	}
}

// redactCheckEvents waits for a ModuleRunFailed Event that quotes the
// API server's refusal and fails when any Event shows a secret.
func redactCheckEvents(t *testing.T, h *operatortest.Harness) {
	t.Helper()
	// client-go folds Events of one reason about one object into a
	// series: the ConfigMap's ModuleRunFailed Events are one series. Those
	// about the (cluster-scoped) Module objects are in "default".
	h.Poll("a ModuleRunFailed Event", func() bool {
		evs, err := h.Client.EventsV1().Events(h.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range evs.Items {
			if ev := &evs.Items[i]; ev.Reason == "ModuleRunFailed" && strings.Contains(ev.Note, "Invalid value") {
				return true
			}
		}
		return false
	})
	for _, ns := range []string{h.Namespace, metav1.NamespaceDefault} {
		evs, err := h.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs.Items {
			redactCheck(t, "Event "+ns+"/"+evs.Items[i].Name, evs.Items[i].Note)
		}
	}
}

// TestAttackerReadsStatusPageWithoutToken: with --status-page=auth, a
// client without a token, or whose user may not get /, is refused the
// status page, and a user whom RBAC allows gets it; probes stay open.
func TestAttackerReadsStatusPageWithoutToken(t *testing.T) {
	h := operatortest.New(t, cp, bin)
	h.SetConfig(map[string]string{})
	op := h.Start(operatortest.Options{ModulesDir: t.TempDir(), GlobalHooksDir: t.TempDir(), Args: []string{"--status-page=auth"}})
	op.WaitReady()

	code, body, err := operatortest.HTTPGet(t, op.URL()+"/")
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusUnauthorized {
		t.Errorf("GET / without a token: %d %q, want 401", code, body)
	}
	if code, _, err := operatortest.HTTPGet(t, op.URL()+"/healthz"); err != nil || code != http.StatusOK {
		t.Errorf("GET /healthz without a token: %d %v, want 200", code, err)
	}

	reader := redactServiceAccount(t, h, "redact-status-reader", true)
	nobody := redactServiceAccount(t, h, "redact-nobody", false)
	h.Poll("an authorized token gets the status page", func() bool {
		return redactGetWithToken(t, op.URL()+"/", reader) == http.StatusOK
	})
	if code := redactGetWithToken(t, op.URL()+"/", nobody); code != http.StatusForbidden {
		t.Errorf("GET / as a user without the right: %d, want 403", code)
	}
}

// redactServiceAccount makes a ServiceAccount in the test's namespace,
// allowed to get the non-resource URL / when allowed, and returns a token
// of it.
func redactServiceAccount(t *testing.T, h *operatortest.Harness, name string, allowed bool) string {
	t.Helper()
	ctx := t.Context()
	sa, err := h.Client.CoreV1().ServiceAccounts(h.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if allowed {
		role := h.Namespace + "-" + name
		rbac := h.Client.RbacV1()
		if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: h.Namespace}},
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		cleanup := context.WithoutCancel(ctx)
		t.Cleanup(func() {
			ctx := cleanup
			_ = rbac.ClusterRoleBindings().Delete(ctx, role, metav1.DeleteOptions{})
			_ = rbac.ClusterRoles().Delete(ctx, role, metav1.DeleteOptions{})
		})
	}
	tok, err := h.Client.CoreV1().ServiceAccounts(h.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// redactGetWithToken returns the status code of a GET of url with a
// bearer token, 0 when there is no answer.
func redactGetWithToken(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
