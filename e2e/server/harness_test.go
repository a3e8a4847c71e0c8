package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// source is a minimal server.Source: fixed modules and queues, one
// module's manifest, and readiness the test flips.
type source struct {
	ready    atomic.Bool
	manifest string
}

func (s *source) Ready() bool { return s.ready.Load() }

func (*source) Conditions() []status.Condition { return nil }

func (s *source) Modules() []status.ModuleStatus {
	return []status.ModuleStatus{
		{Name: "cert-manager", Enabled: true, By: status.SourceConfigMap, Phase: status.PhaseReady, Revision: 4},
		{Name: "ingress-nginx", Enabled: true, By: status.SourceStaticCommon, Phase: status.PhaseFailed, Revision: 1,
			LastError: `upgrade release "ingress-nginx": timed out`},
		{Name: "legacy-dashboard", By: status.SourceDefault, Phase: status.PhaseDisabled},
	}
}

func (s *source) QueueStatuses() []status.QueueStatus {
	return []status.QueueStatus{
		{Name: "main", Status: "running", Tasks: []status.TaskStatus{
			{Description: "ModuleRun ingress-nginx", Queued: time.Now(), Failures: 2, LastError: "helm: timed out"},
		}},
		{Name: "cert-sync", Status: "idle", Tasks: []status.TaskStatus{}},
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
	rec, hooks := metrics.NewRecorder(), metrics.NewHookMetrics()
	opts := server.Options{
		ListenAddress: operatortest.FreeAddress(t),
		DebugSocket:   operatortest.SocketPath(t),
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
		case <-time.After(server.ShutdownTimeout + operatortest.Timeout):
			t.Errorf("server did not stop")
		}
	})
	operatortest.Poll(t, "the server to answer /healthz", func() bool {
		code, _, err := operatortest.HTTPGet(t, r.base+"/healthz")
		return err == nil && code == http.StatusOK
	})
	return r
}
