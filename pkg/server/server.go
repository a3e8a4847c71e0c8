// Package server is the operator's HTTP side: probes, Prometheus metrics and
// a status page on a TCP listener, a JSON debug API on a unix socket (and,
// when asked for, on the TCP listener behind Kubernetes authentication and
// authorization), and the client and render diff the debug CLI uses.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Defaults of Options.
const (
	DefaultListenAddress = "0.0.0.0:9650"
	DefaultPort          = "9650"
	DefaultDebugSocket   = "/var/run/addon-operator/debug.socket"
)

// Who the status page is served to (Options.StatusPage).
const (
	// StatusPageLoopback serves it to clients on the pod's loopback
	// address only: kubectl port-forward, kubectl exec.
	StatusPageLoopback = "loopback"
	// StatusPageAuth serves it to requests Auth lets through, as the
	// debug API.
	StatusPageAuth = "auth"
	// StatusPageOpen serves it to anyone who reaches the port.
	StatusPageOpen = "open"
)

// ShutdownTimeout bounds a graceful shutdown: requests still running then
// are cut off.
const ShutdownTimeout = 5 * time.Second

// readHeaderTimeout stops clients that never finish their request headers
// from holding connections.
const readHeaderTimeout = 10 * time.Second

// Options configure a Server. Defaults come from DefaultOptions, flags from
// BindFlags; environment fallbacks are applied by the command.
type Options struct {
	// ListenAddress is the host:port of the HTTP listener. A bare host, as
	// the established implementation's ADDON_OPERATOR_LISTEN_ADDRESS holds,
	// listens on DefaultPort.
	ListenAddress string
	// DebugSocket is the path of the unix socket serving the debug API;
	// empty disables it. The socket is created with mode 0600: the debug
	// API shows values, which may hold secrets.
	DebugSocket string
	// Metrics serves /metrics, the operator's own metrics
	// (metrics.Recorder.Handler); nil leaves the route out.
	Metrics http.Handler
	// HookMetrics serves /metrics/hooks, the metrics hooks emit
	// (metrics.HookMetrics.Handler); nil leaves the route out.
	HookMetrics http.Handler
	// DebugHTTP serves the debug API (values, config, renders, queues) on
	// the TCP listener too, to requests Auth lets through. Off, only the
	// socket serves it: values may hold secrets.
	DebugHTTP bool
	// MetricsAuth puts /metrics and /metrics/hooks behind Auth as well.
	MetricsAuth bool
	// ListenTLS serves HTTPS on ListenAddress with a self-signed
	// certificate made at start, so that bearer tokens and metrics do not
	// cross the network in clear.
	ListenTLS bool
	// Auth checks requests to the routes DebugHTTP and MetricsAuth
	// protect; it is required when either is set (KubeAuth).
	Auth Auth
	// Problems make /readyz answer 503 with their messages while any holds,
	// and are shown on the status page.
	Problems []Problem
	// StatusPage says who gets the status page: StatusPageLoopback (the
	// default), StatusPageAuth or StatusPageOpen. Its last errors may quote
	// what the API server refused, so it is not open by default.
	StatusPage string
	// Redact, when set, removes secrets from every text the server shows
	// of the source (last errors, messages, conditions, problems, debug
	// API errors) (*redact.Redactor.String).
	Redact func(string) string
}

// DefaultOptions returns the defaults documented in --help.
func DefaultOptions() Options {
	return Options{ListenAddress: DefaultListenAddress, DebugSocket: DefaultDebugSocket, StatusPage: StatusPageLoopback}
}

// BindFlags registers the listen address and the debug socket; the metrics
// handlers are wired by the caller.
func (o *Options) BindFlags(flags *pflag.FlagSet) {
	flags.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress,
		"host:port serving metrics, probes and the status page; a bare host listens on port "+DefaultPort+
			" (env ADDON_OPERATOR_LISTEN_ADDRESS)")
	flags.StringVar(&o.DebugSocket, "debug-socket", o.DebugSocket,
		"unix socket serving the debug API to the debug commands; empty disables it (env ADDON_OPERATOR_DEBUG_SOCKET, DEBUG_UNIX_SOCKET)")
	flags.BoolVar(&o.DebugHTTP, "debug-http", o.DebugHTTP,
		"also serve the debug API (values, config, renders) on --listen-address, to bearer tokens whose Kubernetes user may get the path "+
			"(TokenReview, SubjectAccessReview; RBAC nonResourceURLs /debug/*) (env ADDON_OPERATOR_DEBUG_HTTP)")
	flags.BoolVar(&o.ListenTLS, "listen-tls", o.ListenTLS,
		"serve HTTPS on --listen-address with a self-signed certificate made at start; clients skip its verification (env ADDON_OPERATOR_LISTEN_TLS)")
	flags.StringVar(&o.StatusPage, "status-page", o.StatusPage,
		"who gets the status page at / on --listen-address: \""+StatusPageLoopback+"\" (clients on the pod's loopback address: kubectl port-forward), "+
			"\""+StatusPageAuth+"\" (bearer tokens whose Kubernetes user may get the path /, checked as for --debug-http) or \""+StatusPageOpen+"\" (anyone who reaches the port); "+
			"its errors may quote what the API server refused (env ADDON_OPERATOR_STATUS_PAGE)")
	flags.BoolVar(&o.MetricsAuth, "metrics-auth", o.MetricsAuth,
		"serve /metrics and /metrics/hooks only to bearer tokens whose Kubernetes user may get the path, checked as for --debug-http (env ADDON_OPERATOR_METRICS_AUTH)")
}

// Protected reports whether some route needs Auth.
func (o *Options) Protected() bool {
	return o.DebugHTTP || o.MetricsAuth || o.StatusPage == StatusPageAuth
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	_, port, err := net.SplitHostPort(o.listenAddress())
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--listen-address %q: want host:port, e.g. %s", o.ListenAddress, DefaultListenAddress)
	}
	switch o.StatusPage {
	case "", StatusPageLoopback, StatusPageAuth, StatusPageOpen:
	default:
		return fmt.Errorf("--status-page %q: want %q, %q or %q", o.StatusPage, StatusPageLoopback, StatusPageAuth, StatusPageOpen)
	}
	return nil
}

// listenAddress is ListenAddress with DefaultPort added to a bare host.
func (o *Options) listenAddress() string {
	if _, _, err := net.SplitHostPort(o.ListenAddress); err != nil {
		return net.JoinHostPort(o.ListenAddress, DefaultPort)
	}
	return o.ListenAddress
}

// Source is what the server shows; *operator.Operator is the real one. Its
// methods are called from request goroutines and must be safe for
// concurrent use.
type Source interface {
	// Ready reports whether the first converge has finished.
	Ready() bool
	// Conditions lists what is wrong that the operator works around
	// (a deleted or rejected ConfigMap); the status page and /readyz show
	// them.
	Conditions() []status.Condition
	// Modules returns every module's status, in module order.
	Modules() []status.ModuleStatus
	// QueueStatuses returns every queue with its tasks, main first.
	QueueStatuses() []status.QueueStatus
	// GlobalValues returns the effective global values, hook patches
	// included; GlobalConfig the global section of the ConfigMap.
	GlobalValues() values.Values
	GlobalConfig() values.Values
	// ModuleValues, ModuleConfig and RenderModule are only called with
	// names Modules lists.
	ModuleValues(name string) (values.Values, error)
	ModuleConfig(name string) (values.Values, error)
	RenderModule(ctx context.Context, name string) (*helm.Rendered, error)
}

// Server serves a Source over HTTP. Create it with New and start it with Run.
type Server struct {
	opts Options
	src  Source
	log  *slog.Logger
	page *template.Template
	// modulePageTmpl renders /modules/{name}.
	modulePageTmpl *template.Template
	// guard checks requests to protected routes, with opts.Auth.
	guard *guard
}

// New returns a server for src; it does not listen until Run. A nil log
// discards the server's logs.
func New(opts Options, src Source, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, src: src, log: log, page: statusTemplate(), modulePageTmpl: pageTemplate("module", moduleHTML), guard: &guard{auth: opts.Auth, log: log}}
}

// Run listens on ListenAddress and DebugSocket and serves until ctx ends,
// then shuts down within ShutdownTimeout and removes the socket. It returns
// nil after a shutdown, or the error that stopped a listener.
func (s *Server) Run(ctx context.Context) error {
	if err := s.opts.Validate(); err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if s.opts.ListenTLS {
		var err error
		if tlsCfg, err = selfSignedTLS(); err != nil {
			return err
		}
	}
	var lc net.ListenConfig
	tcp, err := lc.Listen(ctx, "tcp", s.opts.listenAddress())
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if tlsCfg != nil {
		tcp = tls.NewListener(tcp, tlsCfg)
		s.log.Info("http server speaks tls with a self-signed certificate", slog.String(logkey.Name, tcp.Addr().String()))
	}
	var socket net.Listener
	if s.opts.DebugSocket != "" {
		socket, err = listenSocket(ctx, s.opts.DebugSocket)
		if err != nil {
			_ = tcp.Close()
			return err
		}
	}
	return s.Serve(ctx, tcp, socket)
}

// Serve is Run on listeners the caller opened: Handler on tcp and
// DebugHandler on socket, which may be nil. It closes both.
func (s *Server) Serve(ctx context.Context, tcp, socket net.Listener) error {
	if s.opts.Protected() && s.opts.Auth == nil {
		_ = tcp.Close()
		if socket != nil {
			_ = socket.Close()
		}
		return errNoAuth
	}
	g, gctx := errgroup.WithContext(ctx)
	s.serve(ctx, gctx, g, tcp, s.Handler())
	if socket != nil {
		s.serve(ctx, gctx, g, socket, s.DebugHandler())
	}
	s.log.Info("http server listening", slog.String(logkey.Name, tcp.Addr().String()))
	return g.Wait()
}

// serve runs one http.Server on ln in g and shuts it down when stop ends.
// Requests get ctx, so a shutdown cancels what they wait for.
func (s *Server) serve(ctx, stop context.Context, g *errgroup.Group, ln net.Listener, h http.Handler) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// Failed handshakes and the like are the clients' affair.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve %s: %w", ln.Addr(), err)
		}
		return nil
	})
	g.Go(func() error {
		<-stop.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(stop), ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			s.log.Warn("http server shutdown cut requests off", slog.String(logkey.Name, ln.Addr().String()), logkey.Err(err))
			_ = srv.Close()
		}
		return nil
	})
}

// listenSocket listens on a unix socket at path, replacing a socket a
// killed operator left behind; any other file there is an error.
func listenSocket(ctx context.Context, path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("debug socket directory: %w", err)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("debug socket: %w", err)
	case fi.Mode()&os.ModeSocket == 0:
		return nil, fmt.Errorf("debug socket %s: the file exists and is not a socket", path)
	default:
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale debug socket: %w", err)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on debug socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("debug socket mode: %w", err)
	}
	return ln, nil
}
