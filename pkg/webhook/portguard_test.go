package webhook

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestGuard: what reaches the handlers, by body length and, with a client
// CA, by certificate and path.
func TestGuard(t *testing.T) {
	verified := &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}}
	for name, tt := range map[string]struct {
		clientCA bool
		path     string
		length   int64 // -1: unknown
		tls      *tls.ConnectionState
		want     int
		wantLane string
	}{
		"a review":                       {path: "/validate/absent.example.com", length: 100, want: http.StatusBadRequest, wantLane: "trusted"},
		"a review at the bound":          {path: "/validate/absent.example.com", length: maxReviewBytes, want: http.StatusBadRequest, wantLane: "trusted"},
		"a body above the bound":         {path: "/validate/absent.example.com", length: maxReviewBytes + 1, want: http.StatusRequestEntityTooLarge},
		"a body of unknown length":       {path: "/validate/absent.example.com", length: -1, want: http.StatusLengthRequired},
		"client CA: no certificate":      {clientCA: true, path: "/validate/absent.example.com", length: 100, want: http.StatusUnauthorized},
		"client CA: ConfigMap check":     {clientCA: true, path: configMapPath, length: 100, want: http.StatusUnauthorized},
		"client CA: verified":            {clientCA: true, path: "/validate/absent.example.com", length: 100, tls: verified, want: http.StatusBadRequest, wantLane: "trusted"},
		"client CA: conversion":          {clientCA: true, path: "/convert/things.example.com", length: 2, want: http.StatusOK, wantLane: "anonymous"},
		"client CA: verified conversion": {clientCA: true, path: "/convert/things.example.com", length: 2, tls: verified, want: http.StatusOK, wantLane: "trusted"},
		"client CA: conversion too big":  {clientCA: true, path: "/convert/things.example.com", length: maxReviewBytes + 1, want: http.StatusRequestEntityTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestServer(t, 1)
			if tt.clientCA {
				s.opts.ClientCA = "ca.crt"
			}
			lane := ""
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch runSlots(r.Context(), nil) {
				case s.trusted.runs:
					lane = "trusted"
				case s.anonymous.runs:
					lane = "anonymous"
				}
				if r.URL.Path == "/convert/things.example.com" {
					_, _ = io.Copy(io.Discard, r.Body)
					return // the lane is what counts here
				}
				s.mux.ServeHTTP(w, r)
			})
			var body io.Reader = bytes.NewReader(make([]byte, max(tt.length, 0)))
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, tt.path, body)
			req.ContentLength, req.TLS = tt.length, tt.tls
			rec := httptest.NewRecorder()
			s.guard(next).ServeHTTP(rec, req)
			if rec.Code != tt.want || lane != tt.wantLane {
				t.Errorf("status %d in lane %q, want %d in lane %q (%s)", rec.Code, lane, tt.want, tt.wantLane, rec.Body)
			}
		})
	}
}

// TestGuardBudget: a request that finds the in-flight budget spent waits,
// then is answered 429 with Retry-After; once the budget is free it is
// served.
func TestGuardBudget(t *testing.T) {
	s := newTestServer(t, 1)
	if !s.trusted.budget.TryAcquire(s.opts.MaxInflightBytes - minRequestWeight + 1) {
		t.Fatal("the budget is not free at the start")
	}
	serve := func() *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate/absent.example.com", bytes.NewReader(admissionReview(t, "1")))
		rec := httptest.NewRecorder()
		s.guard(s.mux).ServeHTTP(rec, req)
		return rec
	}
	start := time.Now()
	rec := serve()
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("with the budget spent: status %d, Retry-After %q; want 429 with Retry-After 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if waited := time.Since(start); waited < budgetWait {
		t.Errorf("answered after %s, want a wait of %s first", waited, budgetWait)
	}
	s.trusted.budget.Release(s.opts.MaxInflightBytes - minRequestWeight + 1)
	if rec := serve(); rec.Code != http.StatusNotFound {
		t.Errorf("with the budget free: status %d, want 404 from the handler", rec.Code)
	}
}

// TestClientCertificates: with --webhook-client-ca and
// --webhook-client-names the server serves admission only to clients
// whose certificate that CA signed for an allowed name; without one a
// client reaches conversion and /healthz alone.
func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := testCA(t, "client-ca")
	other, otherKey := testCA(t, "other-ca")
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Namespace, opts.URL = "ops", "https://127.0.0.1:9680"
	opts.ListenAddress, opts.ListenPort = "127.0.0.1", 0
	opts.ClientCA, opts.ClientNames = filepath.Join(dir, "ca.crt"), []string{"kube-apiserver"}
	s := New(opts, Clients{Kube: fake.NewClientset()}, Checks{}, clocktesting.NewFakeClock(time.Now()), slog.New(slog.DiscardHandler))
	runServing(t, s)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.certs.CABundle())

	for name, tt := range map[string]struct {
		cert *tls.Certificate
		path string
		want int // 0: the handshake fails
	}{
		"no certificate: admission":  {path: "/validate/absent.example.com", want: http.StatusUnauthorized},
		"no certificate: conversion": {path: "/convert/things.example.com", want: http.StatusOK},
		"allowed name":               {cert: testClientCert(t, ca, caKey, "kube-apiserver"), path: "/validate/absent.example.com", want: http.StatusNotFound},
		"another name":               {cert: testClientCert(t, ca, caKey, "someone"), path: "/validate/absent.example.com"},
		"another CA":                 {cert: testClientCert(t, other, otherKey, "kube-apiserver"), path: "/validate/absent.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, ServerName: "127.0.0.1"}
			if tt.cert != nil {
				// Presented whatever CAs the server asks for, as an
				// attacker would.
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return tt.cert, nil }
			}
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
			defer client.CloseIdleConnections()
			body := admissionReview(t, "1")
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+s.Addr()+tt.path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if tt.want == 0 {
				if err == nil {
					_ = resp.Body.Close()
					t.Fatalf("status %d, want the handshake refused", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

func testCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func testClientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
