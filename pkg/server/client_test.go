package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClientCalls(t *testing.T) {
	src := newFakeSource()
	ts := httptest.NewServer(newTestServer(src).DebugHandler())
	t.Cleanup(ts.Close)
	c, err := NewHTTPClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	ing := src.rendered["ingress"]
	tests := []struct {
		name string
		call func(ctx context.Context) (any, error)
		want any
	}{
		{"queues", func(ctx context.Context) (any, error) { return c.Queues(ctx) }, src.queues},
		{"modules", func(ctx context.Context) (any, error) { return c.Modules(ctx) }, src.modules},
		{"global values", func(ctx context.Context) (any, error) { return c.GlobalValues(ctx) }, src.global},
		{"global config", func(ctx context.Context) (any, error) { return c.GlobalConfig(ctx) }, src.config},
		{"module values", func(ctx context.Context) (any, error) { return c.ModuleValues(ctx, "ingress") }, src.values["ingress"]},
		{"module config", func(ctx context.Context) (any, error) { return c.ModuleConfig(ctx, "ingress") }, src.configs["ingress"]},
		{"render", func(ctx context.Context) (any, error) { return c.Render(ctx, "ingress") },
			&Rendered{Manifest: ing.Manifest, Hooks: ing.Hooks, Checksum: ing.Checksum}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.call(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			// Values come back through JSON: numbers as float64.
			if diff := cmp.Diff(jsonOf(t, mustJSON(t, tt.want)), jsonOf(t, mustJSON(t, got))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	src := newFakeSource()
	src.renderErr = errRender
	ts := httptest.NewServer(newTestServer(src).DebugHandler())
	t.Cleanup(ts.Close)
	c, err := NewHTTPClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}

	_, err = c.ModuleValues(t.Context(), "nope")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound || se.Message != `no module "nope"` {
		t.Errorf("unknown module: %v, want a 404 StatusError naming the module", err)
	}
	_, err = c.Render(t.Context(), "ingress")
	if !errors.As(err, &se) || se.Code != http.StatusInternalServerError || se.Error() != `render chart "ingress": template: bad (HTTP 500)` {
		t.Errorf("render failing: %v, want the server's message with HTTP 500", err)
	}

	missing := filepath.Join(t.TempDir(), "debug.socket")
	_, err = NewSocketClient(missing).Queues(t.Context())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "unix socket "+missing) {
		t.Errorf("missing socket: %v, want ErrUnreachable naming %s", err, missing)
	}
	ts.Close()
	_, err = c.Queues(t.Context())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), ts.URL) {
		t.Errorf("stopped server: %v, want ErrUnreachable naming %s", err, ts.URL)
	}
}

func TestNewHTTPClient(t *testing.T) {
	tests := []struct {
		address  string
		wantBase string
		wantErr  bool
	}{
		{address: "http://10.0.0.5:9650", wantBase: "http://10.0.0.5:9650"},
		{address: "http://10.0.0.5:9650/", wantBase: "http://10.0.0.5:9650"},
		{address: "https://operator.example:443", wantBase: "https://operator.example:443"},
		{address: "localhost:9650", wantBase: "http://localhost:9650"},
		{address: "ftp://host:21", wantErr: true},
		{address: "http://", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			c, err := NewHTTPClient(tt.address)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewHTTPClient: %v, want error %t", err, tt.wantErr)
			}
			if err == nil && c.base != tt.wantBase {
				t.Errorf("base %q, want %q", c.base, tt.wantBase)
			}
		})
	}
}

func TestClientProfile(t *testing.T) {
	srv := newTestServer(newFakeSource())
	debug := httptest.NewServer(srv.DebugHandler())
	t.Cleanup(debug.Close)
	c, err := NewHTTPClient(debug.URL)
	if err != nil {
		t.Fatal(err)
	}
	heap, err := c.Profile(t.Context(), "heap", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(heap) < 2 || heap[0] != 0x1f || heap[1] != 0x8b {
		t.Errorf("heap profile is not gzipped protobuf: % x", heap[:min(len(heap), 8)])
	}
	if _, err := c.Profile(t.Context(), "nonsense", 0); err == nil {
		t.Error("an unknown profile gave no error")
	}

	// The TCP listener does not serve profiles: a clear 404.
	tcp := httptest.NewServer(srv.Handler())
	t.Cleanup(tcp.Close)
	c, err = NewHTTPClient(tcp.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Profile(t.Context(), "heap", 0)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("profile over the TCP listener: %v, want a 404 StatusError", err)
	}
}
