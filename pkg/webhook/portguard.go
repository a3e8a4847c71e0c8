package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
	certutil "k8s.io/client-go/util/cert"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// The bounds of the webhook port, documented in docs/security/webhook-port.md.
const (
	// maxReviewBytes bounds a request's body. The API server refuses
	// request bodies above 3 MiB, so an AdmissionReview carries at most two
	// such objects (object and oldObject); 1 MiB more covers the rest of the
	// review (userInfo, options, names). A ConversionReview carries the
	// objects of one read or write, each stored by etcd (1.5 MiB by
	// default) or written in one request, and fits the same bound.
	maxReviewBytes = 7 << 20
	// minRequestWeight is what every request counts against the in-flight
	// budget whatever its body, for the buffers and decoding it costs, so
	// that the budget bounds the number of small requests too.
	minRequestWeight = 16 << 10
	// budgetWait is how long a request waits for the in-flight budget before
	// it is answered 429 with Retry-After: the API server's client retries
	// such answers within the webhook's timeout.
	budgetWait = time.Second
	// readHeaderTimeout bounds the TLS handshake and the request's headers
	// (net/http bounds the handshake by the smallest of its timeouts);
	// readTimeout the whole request with its body; writeTimeout the answer,
	// after the longest hook deadline (30 s) and the time to read; idleTimeout
	// a kept-alive connection between requests (the API server's client
	// keeps them 90 s and opens a new one when the server closed it).
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 45 * time.Second
	idleTimeout       = 30 * time.Second
	// maxHeaderBytes bounds a request's headers; the API server sends a
	// few hundred bytes.
	maxHeaderBytes = 16 << 10
)

// lane is a share of the server's capacity: requests of one lane never wait
// for those of another. With a client CA, requests that present no
// certificate (the API server sends none for CRD conversion) go into a lane
// of their own, so that they cannot hold back admission.
type lane struct {
	budget *semaphore.Weighted // body bytes in flight
	runs   chan struct{}       // hook runs in progress
}

func newLane(budget int64, runs int) *lane {
	return &lane{budget: semaphore.NewWeighted(budget), runs: make(chan struct{}, runs)}
}

type laneKey struct{}

// runSlots returns the run slots of the request's lane, def outside a
// request.
func runSlots(ctx context.Context, def chan struct{}) chan struct{} {
	if l, ok := ctx.Value(laneKey{}).(*lane); ok {
		return l.runs
	}
	return def
}

// guard admits a request to next: it picks the request's lane (refusing
// admission requests without an accepted client certificate when a client
// CA is set), refuses bodies of unknown or excessive length, waits for the
// lane's budget and bounds the body to its declared length.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, code, reason := s.laneOf(r)
		if l == nil {
			s.log.Debug("webhook request refused", slog.String(logkey.Reason, reason), slog.String(logkey.Path, r.URL.Path))
			http.Error(w, reason, code)
			return
		}
		switch {
		case r.ContentLength < 0:
			http.Error(w, "a request body needs a Content-Length", http.StatusLengthRequired)
			return
		case r.ContentLength > maxReviewBytes:
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds %d", r.ContentLength, maxReviewBytes), http.StatusRequestEntityTooLarge)
			return
		}
		weight := max(r.ContentLength, minRequestWeight)
		ctx, cancel := context.WithTimeout(r.Context(), budgetWait)
		err := l.budget.Acquire(ctx, weight)
		cancel()
		if err != nil {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many webhook requests in flight", http.StatusTooManyRequests)
			return
		}
		defer l.budget.Release(weight)
		r.Body = http.MaxBytesReader(w, r.Body, r.ContentLength)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), laneKey{}, l)))
	})
}

// laneOf decides which lane serves r; nil with a status and reason when
// none does.
func (s *Server) laneOf(r *http.Request) (l *lane, code int, reason string) {
	if s.opts.ClientCA == "" {
		return s.trusted, 0, ""
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return s.trusted, 0, "" // the name was checked in the handshake
	}
	if strings.HasPrefix(r.URL.Path, "/convert/") || r.URL.Path == "/healthz" {
		return s.anonymous, 0, ""
	}
	return nil, http.StatusUnauthorized, "a client certificate is required"
}

// clientAuth verifies the API server's client certificates against the
// CAs of a file read again every CertCheckInterval.
type clientAuth struct {
	file  string
	names []string
	pool  atomic.Pointer[x509.CertPool]
	mod   time.Time // modification time of the file last read; only load writes it, from New and then from run
}

func newClientAuth(file string, names []string) (*clientAuth, error) {
	a := &clientAuth{file: file, names: names}
	if err := a.load(); err != nil {
		return nil, err
	}
	return a, nil
}

// load reads the file when it changed since the last read.
func (a *clientAuth) load() error {
	info, err := os.Stat(a.file)
	if err != nil {
		return fmt.Errorf("--webhook-client-ca: %w", err)
	}
	if info.ModTime().Equal(a.mod) && a.pool.Load() != nil {
		return nil
	}
	pool, err := certutil.NewPool(a.file)
	if err != nil {
		return fmt.Errorf("--webhook-client-ca: %w", err)
	}
	a.pool.Store(pool)
	a.mod = info.ModTime()
	return nil
}

// tlsConfig returns base with the current CAs for each handshake. A client
// may present no certificate (the API server has none for conversion
// requests, which laneOf handles); one it presents must verify and carry
// an allowed name.
func (a *clientAuth) tlsConfig(base *tls.Config) *tls.Config {
	cfg := base.Clone()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := base.Clone()
		c.ClientCAs, c.ClientAuth = a.pool.Load(), tls.VerifyClientCertIfGiven
		c.VerifyConnection = a.verifyName
		return c, nil
	}
	return cfg
}

// verifyName accepts a verified client certificate whose common name or
// one of whose DNS names is allowed, any verified one when no names are set.
func (a *clientAuth) verifyName(cs tls.ConnectionState) error {
	if len(cs.VerifiedChains) == 0 || len(a.names) == 0 {
		return nil
	}
	leaf := cs.VerifiedChains[0][0]
	if slices.Contains(a.names, leaf.Subject.CommonName) || slices.ContainsFunc(leaf.DNSNames, func(n string) bool { return slices.Contains(a.names, n) }) {
		return nil
	}
	return errors.New("client certificate names no allowed client (--webhook-client-names)")
}

// run reads the CA file again every CertCheckInterval until ctx ends; a
// file that cannot be read keeps the CAs in force and is logged.
func (a *clientAuth) run(ctx context.Context, s *Server) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.clock.After(s.opts.CertCheckInterval):
			if err := a.load(); err != nil {
				s.log.Error("webhook client CA not read again, the last one stays in force", logkey.Err(err))
			}
		}
	}
}
