package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// freeAddress returns a loopback address whose port is free right now.
func freeAddress(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestListenTLS(t *testing.T) {
	opts := DefaultOptions()
	opts.ListenAddress, opts.ListenTLS = freeAddress(t), true
	opts.DebugSocket = filepath.Join(socketDir(t), "debug.socket")
	srv := New(opts, newFakeSource(), discard())
	start(t, srv.Run)
	// The socket is made after the TCP listener: once it answers, both do.
	waitModules(t, NewSocketClient(opts.DebugSocket))

	client := &http.Client{Timeout: waitTimeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // G402: the certificate is self-signed by design
	}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+opts.ListenAddress+"/healthz", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /healthz over TLS: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET /healthz over TLS: %d, TLS %v", resp.StatusCode, resp.TLS)
	}
	leaf := resp.TLS.PeerCertificates[0]
	if !slices.Contains(leaf.DNSNames, tlsHost) || !leaf.NotAfter.After(time.Now().Add(24*time.Hour)) {
		t.Errorf("serving certificate for %v valid until %s, want %q valid for more than a day", leaf.DNSNames, leaf.NotAfter, tlsHost)
	}

	// Plain HTTP gets Go's 400 and no data.
	plain, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+opts.ListenAddress+"/healthz", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.DefaultClient.Do(plain)
	if err != nil {
		t.Fatalf("GET /healthz in clear: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /healthz in clear to the TLS listener: %d, want 400", resp.StatusCode)
	}
}
