package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// leakedSecret is what a fake source's texts quote of a rejected Secret.
const leakedSecret = "s3cr3t-from-a-secret"

// withLeaks makes every text of the source quote leakedSecret.
func withLeaks(f *fakeSource) {
	f.modules[1].LastError = `Secret "creds" is invalid: metadata.labels: Invalid value: "` + leakedSecret + `"`
	f.modules[1].Message = "waiting for " + leakedSecret
	f.queues[0].Tasks[0].LastError = "helm: " + leakedSecret
	f.conds = []status.Condition{{Type: status.ConditionConfigMapInvalid, Message: "key x: " + leakedSecret}}
}

func redactLeaked(s string) string { return strings.ReplaceAll(s, leakedSecret, "[redacted]") }

// TestTextsAreRedacted checks every route that shows the source's texts:
// none shows the secret, and each shows the marker where it was.
func TestTextsAreRedacted(t *testing.T) {
	src := newFakeSource()
	withLeaks(src)
	src.renderErr = errRenderQuoting
	opts := DefaultOptions()
	opts.Redact = redactLeaked
	s := New(opts, src, discard())
	for _, tc := range []struct {
		name string
		h    http.Handler
		path string
	}{
		{"status page", s.Handler(), "/"},
		{"readyz", s.Handler(), "/readyz"},
		{"modules", s.DebugHandler(), "/debug/modules"},
		{"queues", s.DebugHandler(), "/debug/queues"},
		{"warnings", s.DebugHandler(), "/debug/warnings"},
		{"a debug error", s.DebugHandler(), "/debug/modules/ingress/render"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := get(t, tc.h, http.MethodGet, tc.path).Body.String()
			if strings.Contains(body, leakedSecret) {
				t.Errorf("GET %s shows the secret:\n%s", tc.path, body)
			}
			if !strings.Contains(body, "[redacted]") {
				t.Errorf("GET %s shows no marker:\n%s", tc.path, body)
			}
		})
	}
	if got := src.modules[1].LastError; !strings.Contains(got, leakedSecret) {
		t.Errorf("the source's own state was changed: %q", got)
	}
}

// errRenderQuoting is a render error that quotes the secret.
var errRenderQuoting = errors.New("render chart: " + leakedSecret)

// TestStatusPageAccess pins who gets the status page in each mode.
func TestStatusPageAccess(t *testing.T) {
	tests := []struct {
		mode     string
		remote   string
		token    string
		wantCode int
	}{
		{mode: "", remote: "127.0.0.1:5000", wantCode: 200},
		{mode: StatusPageLoopback, remote: "[::1]:5000", wantCode: 200},
		{mode: StatusPageLoopback, remote: "[::ffff:127.0.0.1]:5000", wantCode: 200},
		{mode: StatusPageLoopback, remote: "10.0.0.7:5000", wantCode: 403},
		{mode: StatusPageLoopback, remote: "10.0.0.7:5000", token: readerToken, wantCode: 403},
		{mode: StatusPageLoopback, remote: "garbage", wantCode: 403},
		{mode: StatusPageAuth, remote: "10.0.0.7:5000", wantCode: 401},
		{mode: StatusPageAuth, remote: "127.0.0.1:5000", wantCode: 401},
		{mode: StatusPageAuth, remote: "10.0.0.7:5000", token: nobodyToken, wantCode: 403},
		{mode: StatusPageAuth, remote: "10.0.0.7:5000", token: readerToken, wantCode: 200},
		{mode: StatusPageOpen, remote: "10.0.0.7:5000", wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.mode+" "+tt.remote+" "+tt.token, func(t *testing.T) {
			auth := newFakeAuth()
			auth.allowed["reader"] = append(auth.allowed["reader"], "/")
			opts := DefaultOptions()
			opts.StatusPage, opts.Auth = tt.mode, auth
			h := New(opts, newFakeSource(), discard()).Handler()
			req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", http.NoBody)
			req.RemoteAddr = tt.remote
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Errorf("GET / = %d %q, want %d", rec.Code, rec.Body, tt.wantCode)
			}
			// Probes keep their access whatever the mode.
			req = httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/healthz", http.NoBody)
			req.RemoteAddr = tt.remote
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Errorf("GET /healthz = %d, want 200", rec.Code)
			}
		})
	}
}

func TestStatusPageFlag(t *testing.T) {
	o := DefaultOptions()
	if o.StatusPage != StatusPageLoopback || o.Protected() {
		t.Fatalf("defaults: status page %q, protected %v", o.StatusPage, o.Protected())
	}
	o.StatusPage = StatusPageAuth
	if !o.Protected() {
		t.Error("--status-page=auth does not need Auth")
	}
	o.StatusPage = "public"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--status-page") {
		t.Errorf("Validate(--status-page=public) = %v", err)
	}
}
