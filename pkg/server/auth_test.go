package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// fakeAuth knows bearer tokens by heart (token -> user name) and allows
// users a get on paths with one of their prefixes, or fails while err is
// set. It records what it was asked to authorize.
type fakeAuth struct {
	mu      sync.Mutex
	tokens  map[string]string
	allowed map[string][]string // user -> path prefixes
	err     error
	asked   []string // user path
}

func (f *fakeAuth) Authenticate(_ context.Context, token string) (User, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return User{}, false, f.err
	}
	name, ok := f.tokens[token]
	return User{Name: name}, ok, nil
}

func (f *fakeAuth) Authorize(_ context.Context, u User, path string) (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, u.Name+" "+path)
	if f.err != nil {
		return false, "", f.err
	}
	for _, prefix := range f.allowed[u.Name] {
		if strings.HasPrefix(path, prefix) {
			return true, "", nil
		}
	}
	return false, "no RBAC rule", nil
}

func (f *fakeAuth) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// Tokens the fakes know: reader may get /debug/ and /metrics, scraper only
// /metrics, nobody nothing.
const (
	readerToken  = "reader-token"
	scraperToken = "scraper-token"
	nobodyToken  = "nobody-token"
)

func newFakeAuth() *fakeAuth {
	return &fakeAuth{
		tokens:  map[string]string{readerToken: "reader", scraperToken: "scraper", nobodyToken: "nobody"},
		allowed: map[string][]string{"reader": {"/debug/", "/metrics"}, "scraper": {"/metrics"}},
	}
}

// newProtectedServer is newTestServer with the debug API on HTTP and, with
// metricsAuth, the metrics behind the fake Auth.
func newProtectedServer(metricsAuth bool, log *slog.Logger) (*Server, *fakeAuth) {
	auth := newFakeAuth()
	s := newTestServer(newFakeSource())
	opts := s.opts
	opts.DebugHTTP, opts.MetricsAuth, opts.Auth = true, metricsAuth, auth
	return New(opts, newFakeSource(), log), auth
}

func getWithToken(t *testing.T, h http.Handler, path, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, http.NoBody)
	switch {
	case token == "-basic":
		req.SetBasicAuth("reader", readerToken)
	case token != "":
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestProtectedRoutes(t *testing.T) {
	tests := []struct {
		name        string
		metricsAuth bool
		path, token string
		wantCode    int
		wantBody    string // a substring
	}{
		{name: "values without a token", path: "/debug/modules/ingress/values", wantCode: 401, wantBody: "Unauthorized"},
		{name: "values with an unknown token", path: "/debug/modules/ingress/values", token: "forged", wantCode: 401, wantBody: "Unauthorized"},
		{name: "values with another scheme", path: "/debug/modules/ingress/values", token: "-basic", wantCode: 401},
		{
			name: "values for a user without the right", path: "/debug/modules/ingress/values", token: nobodyToken,
			wantCode: 403, wantBody: `Forbidden: user "nobody" may not get /debug/modules/ingress/values: no RBAC rule`,
		},
		{name: "values for a scraper", path: "/debug/modules/ingress/values", token: scraperToken, wantCode: 403, wantBody: "Forbidden"},
		{name: "values for a reader", path: "/debug/modules/ingress/values", token: readerToken, wantCode: 200, wantBody: `"replicas": 2`},
		{name: "render for a reader", path: "/debug/modules/ingress/render", token: readerToken, wantCode: 200, wantBody: `"checksum": "abc123"`},
		{name: "render without a token", path: "/debug/modules/ingress/render", wantCode: 401},
		{name: "an unknown module for a reader", path: "/debug/modules/nope/values", token: readerToken, wantCode: 404},
		{name: "profiles stay on the socket", path: "/debug/pprof/", token: readerToken, wantCode: 404},
		{name: "open metrics without a token", path: "/metrics", wantCode: 200, wantBody: "operator_metric"},
		{name: "protected metrics without a token", metricsAuth: true, path: "/metrics", wantCode: 401},
		{name: "protected hook metrics without a token", metricsAuth: true, path: "/metrics/hooks", wantCode: 401},
		{name: "protected metrics for a nobody", metricsAuth: true, path: "/metrics", token: nobodyToken, wantCode: 403},
		{name: "protected metrics for a scraper", metricsAuth: true, path: "/metrics", token: scraperToken, wantCode: 200, wantBody: "operator_metric"},
		{name: "protected hook metrics for a scraper", metricsAuth: true, path: "/metrics/hooks", token: scraperToken, wantCode: 200, wantBody: "hook_metric"},
		{name: "healthz stays open", metricsAuth: true, path: "/healthz", wantCode: 200},
		{name: "readyz stays open", metricsAuth: true, path: "/readyz", wantCode: 200},
		{name: "the status page from the network", metricsAuth: true, path: "/", wantCode: 403, wantBody: "loopback clients only"},
		{name: "the status page from the network with a token", path: "/", token: readerToken, wantCode: 403, wantBody: "loopback clients only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newProtectedServer(tt.metricsAuth, discard())
			rec := getWithToken(t, s.Handler(), tt.path, tt.token)
			if rec.Code != tt.wantCode || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("GET %s: %d %q, want %d with %q", tt.path, rec.Code, rec.Body, tt.wantCode, tt.wantBody)
			}
			if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("401 without a WWW-Authenticate header")
			}
		})
	}
}

// TestAuthorizedPath pins what is authorized: the request's path, for
// the token's user.
func TestAuthorizedPath(t *testing.T) {
	s, auth := newProtectedServer(true, discard())
	h := s.Handler()
	getWithToken(t, h, "/debug/global/values", readerToken)
	getWithToken(t, h, "/metrics/hooks", scraperToken)
	getWithToken(t, h, "/metrics", "forged")
	want := []string{"reader /debug/global/values", "scraper /metrics/hooks"}
	if diff := cmp.Diff(want, auth.asked); diff != "" {
		t.Errorf("authorizer asked (-want +got):\n%s", diff)
	}
}

func TestReviewOutage(t *testing.T) {
	var logs bytes.Buffer
	s, auth := newProtectedServer(true, slog.New(slog.NewTextHandler(&logs, nil)))
	h := s.Handler()
	auth.setErr(errors.New("subjectaccessreviews: connection refused"))
	for _, path := range []string{"/metrics", "/debug/queues", "/metrics"} {
		if rec := getWithToken(t, h, path, readerToken); rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s while the authorizer fails: %d, want 503", path, rec.Code)
		}
	}
	auth.setErr(nil)
	for range 2 {
		if rec := getWithToken(t, h, "/metrics", readerToken); rec.Code != http.StatusOK {
			t.Errorf("GET /metrics after the outage: %d, want 200", rec.Code)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "http auth reviews failing"); n != 1 {
		t.Errorf("outage logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "connection refused") {
		t.Errorf("the outage's log line lacks the error:\n%s", out)
	}
	if n := strings.Count(out, "http auth reviews answer again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, out)
	}
}

func TestServeRefusesProtectionWithoutAuth(t *testing.T) {
	for _, opts := range []Options{{DebugHTTP: true}, {MetricsAuth: true}} {
		var lc net.ListenConfig
		tcp, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := New(opts, newFakeSource(), discard()).Serve(t.Context(), tcp, nil); !errors.Is(err, errNoAuth) {
			t.Errorf("Serve with %+v: %v, want errNoAuth", opts, err)
		}
	}
}

func TestAuthFlags(t *testing.T) {
	tests := []struct {
		args                   []string
		debugHTTP, metricsAuth bool
	}{
		{args: nil},
		{args: []string{"--debug-http"}, debugHTTP: true},
		{args: []string{"--metrics-auth"}, metricsAuth: true},
		{args: []string{"--debug-http", "--metrics-auth=true"}, debugHTTP: true, metricsAuth: true},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.BindFlags(flags)
		if err := flags.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if o.DebugHTTP != tt.debugHTTP || o.MetricsAuth != tt.metricsAuth || o.Protected() != (tt.debugHTTP || tt.metricsAuth) {
			t.Errorf("%v: DebugHTTP %t, MetricsAuth %t, Protected %t", tt.args, o.DebugHTTP, o.MetricsAuth, o.Protected())
		}
	}
}

func TestClientWithToken(t *testing.T) {
	s, _ := newProtectedServer(false, discard())
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	c, err := NewHTTPClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := c.WithToken(readerToken).ModuleValues(t.Context(), "ingress")
	if err != nil || vals["ingress"] == nil {
		t.Errorf("module values with the reader's token: %v, %v", vals, err)
	}
	for token, want := range map[string]int{"": http.StatusUnauthorized, nobodyToken: http.StatusForbidden} {
		_, err := c.WithToken(token).ModuleValues(t.Context(), "ingress")
		var se *StatusError
		if !errors.As(err, &se) || se.Code != want {
			t.Errorf("module values with token %q: %v, want HTTP %d", token, err, want)
		}
	}
}
