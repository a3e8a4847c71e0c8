package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// Rendered is the wire form of a module's rendered chart.
type Rendered struct {
	// Manifest is the multi-document YAML Helm would apply.
	Manifest string `json:"manifest"`
	// Hooks are the chart hooks' manifests, in Helm's order.
	Hooks    []string `json:"hooks,omitempty"`
	Checksum string   `json:"checksum"`
}

// apiError is the body of every debug API error.
type apiError struct {
	Error string `json:"error"`
}

// debugRoutes lists the debug API; /debug/ answers with it.
func debugRoutes() []string {
	return []string{
		"/debug/queues",
		"/debug/modules",
		"/debug/modules/{name}/values",
		"/debug/modules/{name}/config",
		"/debug/modules/{name}/render",
		"/debug/global/values",
		"/debug/global/config",
		"/debug/warnings",
	}
}

// Handler serves the TCP listener: /metrics, /metrics/hooks, /healthz,
// /readyz and the status page at /, which shows states and errors but no
// values, to whom StatusPage says. The debug API is served under /debug/
// only with DebugHTTP, to requests Auth lets through; MetricsAuth puts the
// metrics behind Auth too. Probes stay open: kubelets call them without
// tokens.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	if s.opts.DebugHTTP {
		debug := http.NewServeMux()
		s.routeDebug(debug)
		mux.Handle("/debug/", s.protect(debug))
	}
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", s.protectMetrics(s.opts.Metrics))
	}
	if s.opts.HookMetrics != nil {
		mux.Handle("GET /metrics/hooks", s.protectMetrics(s.opts.HookMetrics))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /{$}", s.protectStatus(http.HandlerFunc(s.statusPage)))
	mux.Handle("GET /modules/{name}", s.protectStatus(http.HandlerFunc(s.modulePage)))
	return mux
}

// protect puts h behind the server's Auth.
func (s *Server) protect(h http.Handler) http.Handler {
	return s.guard.wrap(h)
}

// protectMetrics is protect with MetricsAuth, h as it is without.
func (s *Server) protectMetrics(h http.Handler) http.Handler {
	if !s.opts.MetricsAuth {
		return h
	}
	return s.protect(h)
}

// protectStatus serves h as Options.StatusPage says: to loopback clients
// (the default), behind Auth, or to anyone.
func (s *Server) protectStatus(h http.Handler) http.Handler {
	switch s.opts.StatusPage {
	case StatusPageOpen:
		return h
	case StatusPageAuth:
		return s.protect(h)
	default:
		return loopbackOnly(h)
	}
}

// loopbackOnly passes on requests whose peer is a loopback address and
// answers others 403: kubectl port-forward connects from the pod's
// loopback, a client on the network does not. Forwarding headers are not
// believed.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		if addr, err := netip.ParseAddr(host); err != nil || !addr.Unmap().IsLoopback() {
			writeText(w, http.StatusForbidden, "Forbidden: the status page is served to loopback clients only (kubectl port-forward); "+
				"--status-page=auth serves it to authorized Kubernetes users")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// DebugHandler serves the debug API and Go's profiles under
// /debug/pprof/, as the unix socket does. Profiles are not served on the
// TCP listener: only who may open the socket may profile the process.
func (s *Server) DebugHandler() http.Handler {
	mux := http.NewServeMux()
	s.routeDebug(mux)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

func (s *Server) routeDebug(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, debugRoutes())
	})
	mux.HandleFunc("GET /debug/queues", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.queues())
	})
	mux.HandleFunc("GET /debug/modules", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.modules())
	})
	mux.HandleFunc("GET /debug/global/values", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.src.GlobalValues())
	})
	mux.HandleFunc("GET /debug/global/config", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.src.GlobalConfig())
	})
	mux.HandleFunc("GET /debug/warnings", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.warnings())
	})
	mux.HandleFunc("GET /debug/modules/{name}/values", s.moduleRoute(func(_ context.Context, name string) (any, error) {
		return s.src.ModuleValues(name)
	}))
	mux.HandleFunc("GET /debug/modules/{name}/config", s.moduleRoute(func(_ context.Context, name string) (any, error) {
		return s.src.ModuleConfig(name)
	}))
	mux.HandleFunc("GET /debug/modules/{name}/render", s.moduleRoute(func(ctx context.Context, name string) (any, error) {
		r, err := s.src.RenderModule(ctx, name)
		if err != nil {
			return nil, err
		}
		return Rendered{Manifest: r.Manifest, Hooks: r.Hooks, Checksum: r.Checksum}, nil
	}))
}

// moduleRoute answers a per-module route with get's result: 404 for a
// module the source does not list, 500 with the message when get fails.
func (s *Server) moduleRoute(get func(ctx context.Context, name string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		known := slices.ContainsFunc(s.src.Modules(), func(m status.ModuleStatus) bool { return m.Name == name })
		if !known {
			writeJSON(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no module %q", name)})
			return
		}
		v, err := get(r.Context(), name)
		if err != nil {
			s.log.Warn("debug request failed", slog.String(logkey.Module, name), logkey.Err(err))
			writeJSON(w, http.StatusInternalServerError, apiError{Error: s.redact(err.Error())})
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// writeJSON writes v indented, so curl output stays readable.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(apiError{Error: fmt.Sprintf("encode response: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// writeText writes msg as plain text, which browsers must not sniff as
// HTML: messages may quote the request's path.
func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg) //nolint:gosec // G705: text/plain with nosniff is never rendered as HTML
}
