package event

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// TestRecorderRedacts: a failure quoting a secret becomes an Event with
// the marker, even when the note is cut after the secret began.
func TestRecorderRedacts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "s3cr3t-token-value"
		client := fake.NewClientset()
		r := NewRecorder(client, "ns", "addon-operator").
			WithRedactor(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		// The secret straddles the note's 900-byte cut. One Event per
		// reason: client-go folds Events of one reason into a series.
		long := strings.Repeat("x", 874) + `Invalid value: "` + secret + `"`
		for _, record := range []func(){
			func() { r.ModuleFailed("ant", errors.New(long)) },
			func() { r.ReleaseRemediated("cat", "rolled back: "+secret) },
		} {
			record()
			synctest.Wait()
			<-time.After(time.Millisecond)
		}
		synctest.Wait()
		got := notes(t, client)
		if len(got) != 2 {
			t.Errorf("notes = %q, want 2", got)
		}
		for _, n := range got {
			if strings.Contains(n, secret) || strings.Contains(n, secret[:8]) {
				t.Errorf("note shows the secret: %q", n)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}
