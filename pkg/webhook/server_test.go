package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestProblemUntilServing: /readyz's problem holds until the HTTPS server
// answered its own probe, and is gone once it serves.
func TestProblemUntilServing(t *testing.T) {
	opts := DefaultOptions()
	opts.Namespace, opts.URL = "ops", "https://127.0.0.1:9680"
	opts.ListenAddress, opts.ListenPort = "127.0.0.1", 0
	s := New(opts, Clients{Kube: fake.NewClientset()}, Checks{}, clocktesting.NewFakeClock(time.Now()), slog.New(slog.DiscardHandler))
	if s.Problem() == "" {
		t.Fatal("Problem() = \"\" before the server runs")
	}
	runServing(t, s)
	if p := s.Problem(); p != "" {
		t.Errorf("Problem() = %q while serving, want none", p)
	}
}

// runServing runs s until the test ends, and returns once it serves; at
// the end Run must return without error.
func runServing(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-s.Serving():
	case err := <-done:
		done <- err
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not serve within 30 s")
	}
}

// TestServerProtocols: the server speaks HTTP/1.1 alone unless HTTP2 is
// set; a client offering both gets what the server chose.
func TestServerProtocols(t *testing.T) {
	for name, tc := range map[string]struct {
		http2 bool
		want  string
	}{
		"default": {false, "http/1.1"},
		"http2":   {true, "h2"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Namespace, opts.URL = "ops", "https://127.0.0.1:9680"
			opts.ListenAddress, opts.ListenPort = "127.0.0.1", 0
			opts.HTTP2 = tc.http2
			s := New(opts, Clients{Kube: fake.NewClientset()}, Checks{}, clocktesting.NewFakeClock(time.Now()), slog.New(slog.DiscardHandler))
			runServing(t, s)
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(s.certs.CABundle())
			d := tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h2", "http/1.1"}}}
			conn, err := d.DialContext(t.Context(), "tcp", s.Addr())
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer conn.Close()
			if got := conn.(*tls.Conn).ConnectionState().NegotiatedProtocol; got != tc.want {
				t.Errorf("negotiated protocol %q, want %q", got, tc.want)
			}
		})
	}
}
