package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newTestServer serves src with two metrics handlers that name themselves.
func newTestServer(src Source) *Server {
	opts := DefaultOptions()
	opts.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "operator_metric 1\n") })
	opts.HookMetrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hook_metric 1\n") })
	return New(opts, src, discard())
}

// get asks from the pod's loopback, as kubectl port-forward does: the
// status page is served there by default.
func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), method, path, http.NoBody)
	req.RemoteAddr = "127.0.0.1:40000"
	h.ServeHTTP(rec, req)
	return rec
}

// jsonOf decodes s into a generic value, so JSON compares by content.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerRoutes(t *testing.T) {
	tests := []struct {
		name     string
		src      func(*fakeSource)
		method   string
		path     string
		wantCode int
		wantType string
		wantBody string // exact for text, by content for JSON
	}{
		{name: "healthz", path: "/healthz", wantCode: 200, wantType: "text/plain; charset=utf-8", wantBody: "ok\n"},
		{name: "readyz after the first converge", path: "/readyz", wantCode: 200, wantType: "text/plain; charset=utf-8", wantBody: "ok\n"},
		{
			name: "readyz before the first converge", src: func(f *fakeSource) { f.ready = false }, path: "/readyz",
			wantCode: 503, wantType: "text/plain; charset=utf-8", wantBody: "the first converge has not finished\n",
		},
		{
			name: "readyz names conditions and stays ready", src: withConditions, path: "/readyz", wantCode: 200,
			wantType: "text/plain; charset=utf-8",
			wantBody: "ok\nwarning: ConfigMapMissing: ConfigMap ns/addon-operator was deleted; the last valid configuration stays in force\n" +
				"warning: ConfigMapInvalid: key \"fooEnabled\": enabled flag is \"yes\"\n" +
				"warning: ForeignReleases: releases not created by addon-operator are never touched (releases: gone, other)\n",
		},
		{name: "operator metrics", path: "/metrics", wantCode: 200, wantBody: "operator_metric 1\n"},
		{name: "hook metrics", path: "/metrics/hooks", wantCode: 200, wantBody: "hook_metric 1\n"},
		{name: "debug index", path: "/debug/", wantCode: 200, wantType: "application/json", wantBody: `["/debug/queues","/debug/modules",
			"/debug/modules/{name}/values","/debug/modules/{name}/config","/debug/modules/{name}/render","/debug/global/values","/debug/global/config","/debug/warnings"]`},
		{name: "modules", path: "/debug/modules", wantCode: 200, wantType: "application/json", wantBody: `[
			{"name":"cert-manager","enabled":true,"decidedBy":"configmap","phase":"Running","revision":3,
				"message":"waiting for Deployment cert-manager/webhook: Available: 1/3","namespace":"cert-manager"},
			{"name":"ingress","enabled":true,"decidedBy":"static","phase":"Failed","revision":1,"lastError":"upgrade release \"ingress\": <script>alert(1)</script>"},
			{"name":"legacy","enabled":false,"decidedBy":"default","phase":"Disabled"}]`},
		{name: "global values", path: "/debug/global/values", wantCode: 200, wantType: "application/json", wantBody: `{"clusterName":"test","enabledModules":["cert-manager","ingress"]}`},
		{name: "global config", path: "/debug/global/config", wantCode: 200, wantType: "application/json", wantBody: `{"clusterName":"test"}`},
		{name: "module values", path: "/debug/modules/ingress/values", wantCode: 200, wantType: "application/json", wantBody: `{"global":{"clusterName":"test"},"ingress":{"replicas":2}}`},
		{name: "module config", path: "/debug/modules/ingress/config", wantCode: 200, wantType: "application/json", wantBody: `{"replicas":2}`},
		{name: "module render", path: "/debug/modules/ingress/render", wantCode: 200, wantType: "application/json", wantBody: `{
			"manifest":"# Source: ingress/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress\n",
			"hooks":["# Source: ingress/templates/hook.yaml\napiVersion: v1\nkind: Secret\n"],"checksum":"abc123"}`},
		{name: "values of an unknown module", path: "/debug/modules/nope/values", wantCode: 404, wantType: "application/json", wantBody: `{"error":"no module \"nope\""}`},
		{name: "config of an unknown module", path: "/debug/modules/nope/config", wantCode: 404, wantType: "application/json", wantBody: `{"error":"no module \"nope\""}`},
		{name: "render of an unknown module", path: "/debug/modules/nope/render", wantCode: 404, wantType: "application/json", wantBody: `{"error":"no module \"nope\""}`},
		{
			name: "render failing", src: func(f *fakeSource) { f.renderErr = errRender }, path: "/debug/modules/ingress/render",
			wantCode: 500, wantType: "application/json", wantBody: `{"error":"render chart \"ingress\": template: bad"}`,
		},
		{name: "unknown route", path: "/nope", wantCode: 404, wantBody: "404 page not found\n"},
		{name: "unknown debug route", path: "/debug/nope", wantCode: 404, wantBody: "404 page not found\n"},
		{name: "wrong method", method: http.MethodPost, path: "/debug/queues", wantCode: 405, wantBody: "Method Not Allowed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFakeSource()
			if tt.src != nil {
				tt.src(src)
			}
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			// The debug API is the socket's; the TCP listener's default
			// handler does not serve it (TestDefaultHandlerHidesTheDebugAPI).
			h := newTestServer(src).Handler()
			if strings.HasPrefix(tt.path, "/debug/") {
				h = newTestServer(src).DebugHandler()
			}
			rec := get(t, h, method, tt.path)
			if rec.Code != tt.wantCode {
				t.Errorf("status = %d, want %d; body:\n%s", rec.Code, tt.wantCode, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); tt.wantType != "" && got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if tt.wantType == "application/json" {
				if diff := cmp.Diff(jsonOf(t, tt.wantBody), jsonOf(t, rec.Body.String())); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tt.wantBody, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandlerWithoutMetrics(t *testing.T) {
	h := New(DefaultOptions(), newFakeSource(), discard()).Handler()
	for _, path := range []string{"/metrics", "/metrics/hooks"} {
		if rec := get(t, h, http.MethodGet, path); rec.Code != http.StatusNotFound {
			t.Errorf("%s without a handler: status %d, want 404", path, rec.Code)
		}
	}
}

func TestDefaultHandlerHidesTheDebugAPI(t *testing.T) {
	h := newTestServer(newFakeSource()).Handler()
	for _, path := range []string{
		"/debug/", "/debug/queues", "/debug/modules", "/debug/global/values", "/debug/global/config",
		"/debug/modules/ingress/values", "/debug/modules/ingress/config", "/debug/modules/ingress/render",
	} {
		if rec := get(t, h, http.MethodGet, path); rec.Code != http.StatusNotFound {
			t.Errorf("TCP listener serves %s by default: status %d, want 404; body:\n%s", path, rec.Code, rec.Body)
		}
	}
	// The status page shows states, not values: the fake's values hold
	// "replicas" and its rendered manifest "kind: Secret".
	page := get(t, h, http.MethodGet, "/").Body.String()
	for _, secret := range []string{"replicas", "clusterName", "kind: Secret", "abc123"} {
		if strings.Contains(page, secret) {
			t.Errorf("status page shows %q:\n%s", secret, page)
		}
	}
}

func TestDebugHandlerServesOnlyTheDebugAPIAndProfiles(t *testing.T) {
	h := newTestServer(newFakeSource()).DebugHandler()
	tests := map[string]int{
		"/debug/queues":                 200,
		"/debug/modules/ingress/values": 200,
		"/debug/modules/nope/values":    404,
		"/":                             404,
		"/healthz":                      404,
		"/metrics":                      404,
		"/debug/pprof/":                 200,
		"/debug/pprof/heap":             200,
		"/debug/pprof/goroutine":        200,
	}
	for path, want := range tests {
		if rec := get(t, h, http.MethodGet, path); rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
	}
	// A heap profile is gzipped protobuf, as go tool pprof reads it.
	if body := get(t, h, http.MethodGet, "/debug/pprof/heap").Body.Bytes(); len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Errorf("/debug/pprof/heap is not gzipped: % x", body[:min(len(body), 8)])
	}
}

func TestProfilesOnlyOnTheSocket(t *testing.T) {
	h := newTestServer(newFakeSource()).Handler()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
		if rec := get(t, h, http.MethodGet, path); rec.Code != http.StatusNotFound {
			t.Errorf("TCP listener serves %s: status %d, want 404", path, rec.Code)
		}
	}
}

// TestGolden pins the status page and the queues' JSON.
func TestGolden(t *testing.T) {
	tests := []struct {
		golden string
		path   string
		src    func(*fakeSource)
	}{
		{golden: "status.html", path: "/"},
		{golden: "status-starting.html", path: "/", src: func(f *fakeSource) {
			f.ready, f.modules, f.queues = false, nil, nil
		}},
		{golden: "status-conditions.html", path: "/", src: withConditions},
		{golden: "queues.json", path: "/debug/queues"},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			src := newFakeSource()
			if tt.src != nil {
				tt.src(src)
			}
			h := newTestServer(src).Handler()
			if strings.HasPrefix(tt.path, "/debug/") {
				h = newTestServer(src).DebugHandler()
			}
			rec := get(t, h, http.MethodGet, tt.path)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			checkGolden(t, filepath.Join("testdata", tt.golden), rec.Body.String())
		})
	}
}

func TestStatusPageEscapes(t *testing.T) {
	body := get(t, newTestServer(newFakeSource()).Handler(), http.MethodGet, "/").Body.String()
	if strings.Contains(body, "<script>") {
		t.Errorf("a module's last error reached the page unescaped:\n%s", body)
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the module's last error is missing from the page:\n%s", body)
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got), regenerate with -update:\n%s", path, diff)
	}
}
