package server

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/server"
)

// TestEndpoints checks every route over real listeners: probes, metrics
// and the status page on TCP, the debug API on the socket only, and a
// clean shutdown.
func TestEndpoints(t *testing.T) {
	src := &source{}
	r := runServer(t, src)

	tests := []struct {
		path     string
		wantCode int
		wantBody string // a substring
	}{
		{"/healthz", http.StatusOK, "ok"},
		{"/readyz", http.StatusServiceUnavailable, "the first converge has not finished"},
		{"/metrics", http.StatusOK, "go_goroutines"},
		{"/metrics/hooks", http.StatusOK, ""},
		{"/", http.StatusOK, "ingress-nginx"},
		// The debug API is the socket's unless --debug-http.
		{"/debug/queues", http.StatusNotFound, "404 page not found"},
		{"/debug/modules/legacy-dashboard/values", http.StatusNotFound, "404 page not found"},
		{"/debug/modules/legacy-dashboard/render", http.StatusNotFound, "404 page not found"},
	}
	for _, tt := range tests {
		code, body, err := operatortest.HTTPGet(t, r.base+tt.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tt.path, err)
		}
		if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
			t.Errorf("GET %s: %d %q, want %d with %q", tt.path, code, body, tt.wantCode, tt.wantBody)
		}
	}

	src.ready.Store(true)
	if code, _, err := operatortest.HTTPGet(t, r.base+"/readyz"); err != nil || code != http.StatusOK {
		t.Errorf("/readyz after the first converge: %d, %v; want 200", code, err)
	}

	sock := server.NewSocketClient(r.socket)
	mods, err := sock.Modules(t.Context())
	if err != nil || len(mods) != 3 || mods[1].Name != "ingress-nginx" {
		t.Errorf("modules over the socket: %v, %v", mods, err)
	}
	vals, err := sock.ModuleValues(t.Context(), "legacy-dashboard")
	if err != nil || vals["module"] != "legacy-dashboard" {
		t.Errorf("module values over the socket: %v, %v", vals, err)
	}
	_, err = sock.ModuleConfig(t.Context(), "nope")
	var se *server.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("unknown module over the socket: %v, want 404", err)
	}
	if code, _, err := operatortest.HTTPGet(t, r.base+"/nope"); err != nil || code != http.StatusNotFound {
		t.Errorf("unknown route: %d, %v; want 404", code, err)
	}

	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(server.ShutdownTimeout + operatortest.Timeout):
		t.Fatal("Run did not return after cancel")
	}
	if _, err := os.Stat(r.socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("debug socket left behind: %v", err)
	}
	if _, err := sock.Modules(t.Context()); !errors.Is(err, server.ErrUnreachable) {
		t.Errorf("after shutdown: %v, want ErrUnreachable", err)
	}
}
