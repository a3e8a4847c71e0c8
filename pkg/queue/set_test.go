package queue

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestSetWorksQueuesCreatedWhileRunning(t *testing.T) {
	qs := NewSet[string]("main", clocktesting.NewFakeClock(time.Now()), ExponentialBackoff(time.Second, time.Minute), nil)
	if qs.Get("") != qs.Get("main") {
		t.Fatal(`Get("") is not the main queue`)
	}
	seen := make(chan string, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- qs.Run(ctx, func(_ context.Context, task string) ([]string, error) {
			seen <- task
			return nil, nil
		})
	}()
	qs.Get("zeta").PushBack("z")
	qs.Get("alpha").PushBack("a")
	qs.Get("").PushBack("m")
	got := map[string]bool{}
	for len(got) < 3 {
		select {
		case s := <-seen:
			got[s] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("handled %v, want a, m and z", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	snaps := qs.Snapshots()
	names := make([]string, 0, len(snaps))
	for _, s := range snaps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"main", "alpha", "zeta"}, names); diff != "" {
		t.Errorf("snapshot order (-want +got):\n%s", diff)
	}
}
