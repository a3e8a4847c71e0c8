package executionhook

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/streaming/pkg/httpstream"
)

func TestFallbackAndRefusal(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	upgrade := func(cause error) error {
		return fmt.Errorf("stream: %w", &httpstream.UpgradeFailureError{Cause: cause})
	}
	for _, tc := range []struct {
		name              string
		err               error
		fallback, refused bool
	}{
		{name: "refused: container not found", err: upgrade(apierrors.NewBadRequest("container nope is not valid")), refused: true},
		{name: "refused: pod not found", err: upgrade(apierrors.NewNotFound(pods, "db")), refused: true},
		{name: "forbidden: SPDY may be allowed", err: upgrade(apierrors.NewForbidden(pods, "db", errors.New("no get"))), fallback: true, refused: true},
		{name: "no WebSocket on the way", err: upgrade(errors.New("bad handshake")), fallback: true},
		{name: "after the upgrade", err: errors.New("stream reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shouldFallback(tc.err); got != tc.fallback {
				t.Errorf("shouldFallback = %v, want %v", got, tc.fallback)
			}
			if got := refused(tc.err); got != tc.refused {
				t.Errorf("refused = %v, want %v", got, tc.refused)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h\n"} {
		_, _ = b.Write([]byte(s))
	}
	if got := b.String(); got != "efgh" {
		t.Errorf("tail = %q, want efgh (the last 5 bytes, trimmed)", got)
	}
}
