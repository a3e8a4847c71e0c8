package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
)

func TestSetLoopbackURLs(t *testing.T) {
	path := "/hooks/shell-bench-addon-operator-io"
	other := "/hooks/other"
	cfg := &admissionregv1.ValidatingWebhookConfiguration{Webhooks: []admissionregv1.ValidatingWebhook{
		{Name: "other.example.com", ClientConfig: admissionregv1.WebhookClientConfig{Service: &admissionregv1.ServiceReference{Name: "svc", Path: &other}}},
		{Name: "shell.bench.addon-operator.io", ClientConfig: admissionregv1.WebhookClientConfig{Service: &admissionregv1.ServiceReference{Name: "svc", Path: &path}, CABundle: []byte("ca")}},
	}}
	got, err := setLoopbackURLs(cfg, "9443", "shell.bench.addon-operator.io")
	if err != nil {
		t.Fatal(err)
	}
	if got != path {
		t.Errorf("path = %q, want %q", got, path)
	}
	for i, want := range []string{"https://127.0.0.1:9443" + other, "https://127.0.0.1:9443" + path} {
		cc := cfg.Webhooks[i].ClientConfig
		if cc.Service != nil || cc.URL == nil || *cc.URL != want {
			t.Errorf("webhook %d: service %v, URL %v, want only the URL %s", i, cc.Service, cc.URL, want)
		}
	}
	if string(cfg.Webhooks[1].ClientConfig.CABundle) != "ca" {
		t.Error("the CA bundle was not kept")
	}
	if _, err := setLoopbackURLs(cfg, "9443", "missing.example.com"); err == nil {
		t.Error("a configuration without the webhook gave no error")
	}
}

// TestDirectReview posts an AdmissionReview to a server with the bench's
// certificate, as the direct route does, and checks the answer's checks.
func TestDirectReview(t *testing.T) {
	certs, err := writeWebhookCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certs.Cert, certs.Key)
	if err != nil {
		t.Fatal(err)
	}
	allow := true
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil || !strings.Contains(string(in.Request.Object.Raw), `"hook":"bash"`) {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		in.Response = &admissionv1.AdmissionResponse{UID: in.Request.UID, Allowed: allow}
		in.Request = nil
		_ = json.NewEncoder(w).Encode(in)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	c, err := newDirectClient(certs.CA, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := c.review(ctx, srv.URL+"/validate/x", "ns", "bash"); err != nil {
		t.Fatalf("allowed review: %v", err)
	}
	allow = false
	if err := c.review(ctx, srv.URL+"/validate/x", "ns", "bash"); err == nil {
		t.Error("a denied review gave no error")
	}
	if err := c.review(ctx, srv.URL+"/validate/x", "ns", "other"); err == nil {
		t.Error("a 400 gave no error")
	}
}

func TestWebhookReportRatios(t *testing.T) {
	ms := time.Millisecond
	res := []WebhookResult{
		{Route: RouteAPIServer, Hook: "none", Concurrency: 1, Requests: 10, P50: 1 * ms, P99: 2 * ms},
		{Route: RouteAPIServer, Server: "addon-operator", Hook: "bash", Concurrency: 1, Requests: 10, P50: 10 * ms, P99: 20 * ms},
		{Route: RouteAPIServer, Server: "shell-operator", Hook: "bash", Concurrency: 1, Requests: 10, P50: 15 * ms, P99: 10 * ms},
		{Route: RouteDirect, Server: "addon-operator", Hook: "bash", Concurrency: 10, Requests: 10, P50: 20 * ms, P99: 40 * ms},
		{Route: RouteDirect, Server: "shell-operator", Hook: "bash", Concurrency: 10, Requests: 10, P50: 40 * ms, P99: 60 * ms},
	}
	got := WebhookReport(res)
	for _, want := range []string{"| API server | bash | 1 | 1.50x | 0.50x |", "| direct | bash | 10 | 2.00x | 1.50x |"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(WebhookReport(res[:2]), "shell-operator v1.4.12 /") {
		t.Error("a report without shell-operator has a ratio table")
	}
}

func TestDelayModulePod(t *testing.T) {
	dir := t.TempDir()
	w := Workload{Deployment: true, StartDelay: 2 * time.Second}
	l, err := Generate(dir, 20, 10, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := delayModulePod(l, 2*time.Second, stuckDelay); err != nil {
		t.Fatal(err)
	}
	read := func(mod string) string {
		data, err := os.ReadFile(filepath.Join(l.ModulesDir, mod, "templates", "deployment.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := read("010-mod1"); !strings.Contains(got, `: "1h0m0s"`) {
		t.Errorf("mod1's Deployment keeps its delay:\n%s", got)
	}
	for _, mod := range []string{"010-mod2", "020-mod11"} {
		if got := read(mod); !strings.Contains(got, `: "2s"`) {
			t.Errorf("%s's Deployment lost its delay:\n%s", mod, got)
		}
	}
	if err := delayModulePod(l, 5*time.Second, stuckDelay); err == nil {
		t.Error("a delay the chart does not have gave no error")
	}
}
