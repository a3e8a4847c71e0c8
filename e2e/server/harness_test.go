package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// waitTimeout bounds every wait for the server or a browser.
const waitTimeout = 60 * time.Second

// source is a minimal server.Source: fixed modules and queues, one
// module's manifest, and readiness the test flips.
type source struct {
	ready    atomic.Bool
	manifest string
}

func (s *source) Ready() bool { return s.ready.Load() }

func (s *source) Modules() []operator.ModuleStatus {
	return []operator.ModuleStatus{
		{Name: "cert-manager", Enabled: true, By: operator.SourceConfigMap, Phase: operator.PhaseReady, Revision: 4},
		{Name: "ingress-nginx", Enabled: true, By: operator.SourceStaticCommon, Phase: operator.PhaseFailed, Revision: 1,
			LastError: `upgrade release "ingress-nginx": timed out`},
		{Name: "legacy-dashboard", By: operator.SourceDefault, Phase: operator.PhaseDisabled},
	}
}

func (s *source) QueueStatuses() []operator.QueueStatus {
	return []operator.QueueStatus{
		{Name: "main", Status: "running", Tasks: []operator.TaskStatus{
			{Description: "ModuleRun ingress-nginx", Queued: time.Now(), Failures: 2, LastError: "helm: timed out"},
		}},
		{Name: "cert-sync", Status: "idle", Tasks: []operator.TaskStatus{}},
	}
}

func (s *source) GlobalValues() values.Values { return values.Values{"clusterName": "e2e"} }
func (s *source) GlobalConfig() values.Values { return values.Values{"clusterName": "e2e"} }

func (s *source) ModuleValues(name string) (values.Values, error) {
	return values.Values{"global": map[string]any{"clusterName": "e2e"}, "module": name}, nil
}

func (s *source) ModuleConfig(string) (values.Values, error) { return values.Values{}, nil }

func (s *source) RenderModule(context.Context, string) (*helm.Rendered, error) {
	return &helm.Rendered{Manifest: s.manifest, Checksum: "e2e"}, nil
}

// running is a server started with Run on a free port and a debug socket.
type running struct {
	base   string // http://127.0.0.1:port
	socket string
	done   <-chan error
	stop   context.CancelFunc
}

// runServer starts server.Run over src with the real metrics handlers and
// waits until it answers /healthz; a cleanup stops it.
func runServer(t *testing.T, src server.Source) *running {
	t.Helper()
	dir, err := os.MkdirTemp("", "e2esrv") // short: socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rec, hooks := metrics.NewRecorder(), metrics.NewHookMetrics()
	opts := server.Options{
		ListenAddress: freeAddress(t),
		DebugSocket:   filepath.Join(dir, "debug.socket"),
		Metrics:       rec.Handler(),
		HookMetrics:   hooks.Handler(),
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- server.New(opts, src, slog.New(slog.NewTextHandler(t.Output(), nil))).Run(ctx)
	}()
	r := &running{base: "http://" + opts.ListenAddress, socket: opts.DebugSocket, done: done, stop: cancel}
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(server.ShutdownTimeout + waitTimeout):
			t.Errorf("server did not stop")
		}
	})
	poll(t, "the server to answer /healthz", func() bool {
		code, _, err := httpGet(t, r.base+"/healthz")
		return err == nil && code == http.StatusOK
	})
	return r
}

// freeAddress returns a loopback address with a port free right now.
func freeAddress(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func httpGet(t *testing.T, url string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// poll calls cond until it holds or waitTimeout passes.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}
