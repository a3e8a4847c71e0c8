package webhook

import (
	"context"
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
	s := New(opts, Clients{Kube: fake.NewClientset()}, clocktesting.NewFakeClock(time.Now()), slog.New(slog.DiscardHandler))
	if s.Problem() == "" {
		t.Fatal("Problem() = \"\" before the server runs")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case <-s.Serving():
	case err := <-done:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not serve within 30 s")
	}
	if p := s.Problem(); p != "" {
		t.Errorf("Problem() = %q while serving, want none", p)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
