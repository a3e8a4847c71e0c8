package main

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testEvent(name, rv, reason string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), ResourceVersion: rv},
		InvolvedObject: corev1.ObjectReference{Kind: "Module", Name: "m"},
		Reason:         reason,
	}
}

// TestFollowRelistsWhenGone: a watch whose version is gone (410) is
// followed by a list that sends only the Events not seen yet, then a
// watch again; repeats of an Event are sent, other modules' Events not;
// cancelling the context ends it without an error.
func TestFollowRelistsWhenGone(t *testing.T) {
	client := fake.NewClientset(testEvent("seen", "1", "Listed"))
	s := eventStream{client: client, namespace: "default", what: `module "m"`,
		keep: func(ev *corev1.Event) bool { return ev.InvolvedObject.Name == "m" }}
	items, rv, err := s.list(t.Context())
	if err != nil || len(items) != 1 {
		t.Fatalf("list = %d Events, %v; want 1", len(items), err)
	}
	seen := seenEvents{}
	seen.add(&items[0])
	// Recorded while nobody watched, and lost with the expired version.
	if _, err := client.CoreV1().Events("default").Create(t.Context(), testEvent("missed", "2", "WhileGone"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	second := watch.NewFake()
	var (
		mu      sync.Mutex
		watches []string
	)
	client.PrependWatchReactor("events", func(a k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches = append(watches, a.(k8stesting.WatchActionImpl).WatchRestrictions.ResourceVersion)
		if len(watches) == 1 {
			gone := watch.NewFake()
			go gone.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
			return true, gone, nil
		}
		return true, second, nil
	})

	ctx, cancel := context.WithCancel(t.Context())
	var got []string
	sent := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- s.follow(ctx, rv, seen, func(ev corev1.Event) error {
			got = append(got, ev.Reason+"/"+strconv.Itoa(int(ev.Count)))
			sent <- struct{}{}
			return nil
		})
	}()
	<-sent // the missed Event, from the relist
	repeated := testEvent("missed", "3", "WhileGone")
	repeated.Count = 2
	other := testEvent("other", "4", "OtherModule")
	other.InvolvedObject.Name = "n"
	second.Modify(repeated)
	second.Add(other)
	second.Add(testEvent("new", "5", "New"))
	<-sent
	<-sent
	cancel()
	if err := <-done; err != nil {
		t.Errorf("follow after cancel: %v", err)
	}
	if diff := cmp.Diff([]string{"WhileGone/0", "WhileGone/2", "New/0"}, got); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(watches) != 2 || watches[0] != rv {
		t.Errorf("watches from versions %q, want two, the first from the list's %q", watches, rv)
	}
}
