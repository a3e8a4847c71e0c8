package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/webhook/cert"
)

// Server is the HTTPS webhook server with its certificates and the
// configurations it owns. Create it with New; Run serves on every replica;
// Set and Remove (from the leader's operator) change what is served and
// configured, and RunConfigurations keeps the configurations in place.
type Server struct {
	opts  Options
	log   *slog.Logger
	reg   *registry
	certs *cert.Keeper
	conf  *configurer
	sem   chan struct{}
	mux   *http.ServeMux
	clock clock.Clock

	// trusted serves requests with an accepted client certificate, all of
	// them without --webhook-client-ca; anonymous the rest (portguard.go).
	trusted, anonymous *lane

	// checks are the operator's, given to New and never changed.
	checks  Checks
	serving chan struct{} // closed once the server answered its own probe
	addr    atomic.Pointer[string]
}

// Clients are what the server needs of the API server.
type Clients struct {
	Kube kubernetes.Interface
	CRDs apiextensionsclient.Interface
}

// New prepares a server that answers with checks; nothing runs until Run.
func New(opts Options, clients Clients, checks Checks, clk clock.Clock, log *slog.Logger) *Server {
	s := &Server{
		opts: opts, checks: checks, log: log.With(slog.String(logkey.Component, "webhook")), reg: newRegistry(),
		sem: make(chan struct{}, opts.MaxConcurrentRuns), serving: make(chan struct{}), mux: http.NewServeMux(), clock: clk,
	}
	s.trusted = &lane{budget: semaphore.NewWeighted(opts.MaxInflightBytes), runs: s.sem}
	s.anonymous = newLane(opts.MaxInflightBytes, opts.MaxConcurrentRuns)
	s.certs = cert.New(opts.certOptions(), clients.Kube, clk, s.log)
	s.conf = &configurer{opts: opts, kube: clients.Kube, crds: clients.CRDs, reg: s.reg, certs: s.certs, clock: clk, log: s.log, checksConfigMap: s.checksConfigMap,
		checksModuleConfigs: s.checksModuleConfigs, guardsWrites: s.guardsWrites}
	s.mux.HandleFunc("POST /validate/{name}", s.serveAdmission(false))
	s.mux.HandleFunc("POST /mutate/{name}", s.serveAdmission(true))
	s.mux.HandleFunc("POST /convert/{crd}", s.serveConversion)
	s.mux.HandleFunc("POST "+configMapPath, s.serveConfigMap)
	s.mux.HandleFunc("POST "+moduleConfigPath, s.serveModuleConfig)
	s.mux.HandleFunc("POST "+moduleConfigWriteGuardPath, s.serveWriteGuard(moduleConfigWriteGuard, func(g WriteGuard) ConfigWriteCheck { return g.ModuleConfig }))
	s.mux.HandleFunc("POST "+configMapWriteGuardPath, s.serveWriteGuard(configMapWriteGuard, func(g WriteGuard) ConfigWriteCheck { return g.ConfigMap }))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return s
}

func (s *Server) checksConfigMap() bool {
	return s.opts.ConfigMapValidation && s.checks.ConfigMap != nil
}

// Serving is closed once the server answered a TLS request of its own with
// the certificate the configurations trust.
func (s *Server) Serving() <-chan struct{} { return s.serving }

// Addr is the address the server listens on, once it does.
func (s *Server) Addr() string {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// Run keeps the certificate fresh and serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certs.GetCertificate}
	var auth *clientAuth
	if s.opts.ClientCA != "" {
		var err error
		if auth, err = newClientAuth(s.opts.ClientCA, s.opts.ClientNames); err != nil {
			return err
		}
		tlsCfg = auth.tlsConfig(tlsCfg)
	}
	lc := net.ListenConfig{}
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(s.opts.ListenAddress, strconv.Itoa(s.opts.ListenPort)))
	if err != nil {
		return fmt.Errorf("webhook server: %w", err)
	}
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	// Past MaxConnections further connections wait in the kernel's backlog
	// until the timeouts below drop slow ones.
	ln = netutil.LimitListener(ln, s.opts.MaxConnections)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(s.opts.HTTP2)
	srv := &http.Server{
		Handler: s.guard(s.mux), TLSConfig: tlsCfg, Protocols: &protocols,
		ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, WriteTimeout: writeTimeout, IdleTimeout: idleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.certs.Run(ctx) })
	if auth != nil {
		g.Go(func() error { return auth.run(ctx, s) })
	}
	g.Go(func() error {
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("webhook server: %w", err)
		}
		return nil
	})
	g.Go(func() error { return s.probe(ctx, addr) })
	g.Go(func() error {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	})
	return g.Wait()
}

// probe asks the server for /healthz over TLS, trusting only the CA bundle
// the configurations get, until it answers; then Serving is closed.
func (s *Server) probe(ctx context.Context, addr string) error {
	select {
	case <-ctx.Done():
		return nil
	case <-s.certs.Ready():
	}
	_, port, _ := net.SplitHostPort(addr)
	// The name the API server verifies: the URL's host or the Service's.
	serverName := ""
	if ips, dns := s.certs.Hosts(); len(ips) > 0 {
		serverName = ips[0].String()
	} else if len(dns) > 0 {
		serverName = dns[0]
	}
	for {
		err := s.probeOnce(ctx, net.JoinHostPort("127.0.0.1", port), serverName)
		if err == nil {
			s.log.Info("webhook server serving", slog.String(logkey.Name, addr))
			close(s.serving)
			return nil
		}
		s.log.Debug("webhook server probe", logkey.Err(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *Server) probeOnce(ctx context.Context, addr, serverName string) error {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if bundle := s.certs.CABundle(); len(bundle) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(bundle)
		cfg.RootCAs = pool
	} else {
		cfg.InsecureSkipVerify = true // no CA bundle given: the API server trusts the system roots, which the probe cannot check
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer client.CloseIdleConnections()
	u := url.URL{Scheme: "https", Host: addr, Path: "/healthz"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// Set serves an owner's webhook bindings and, once the server answers,
// writes them into the configurations. It returns when the API server
// has them, so a module's first objects are already checked.
func (s *Server) Set(ctx context.Context, owner string, e Entries) error {
	if err := s.reg.set(owner, e, true); err != nil {
		return err
	}
	return s.conf.sync(ctx, s.serving)
}

// Serve serves an owner's webhook bindings without putting them into the
// configurations: a standby replica answers requests the API server sends
// it through the Service.
func (s *Server) Serve(owner string, e Entries) error { return s.reg.set(owner, e, false) }

// Remove takes an owner's bindings out of the configurations, then stops
// serving them.
func (s *Server) Remove(ctx context.Context, owner string) error {
	err := s.conf.syncWithout(ctx, s.serving, owner)
	s.reg.remove(owner)
	return err
}

// RunConfigurations keeps the configurations and CRD conversions in place
// (re-asserting them every CertCheckInterval and when the CA bundle
// changes) until ctx ends. Only the leader runs it.
func (s *Server) RunConfigurations(ctx context.Context) error {
	return s.conf.run(ctx, s.serving)
}

// Problem is what keeps this replica from answering admission and
// conversion requests, for /readyz (server.Problem): "" once its HTTPS
// server answered its own probe. A replica whose webhook server does not
// answer yet is not ready, so that a Service routes the API server's calls
// only to replicas that answer them.
func (s *Server) Problem() string {
	select {
	case <-s.serving:
		return ""
	default:
		return "the webhook server does not answer yet"
	}
}
