package executionhook

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/queue"
)

// A hook that cannot be decoded is a terminal error: reading it again
// cannot fix it, so it is not retried (the watch sees its next change); a
// failing read is retried with backoff.
func TestProcessNextRetriesAllButTerminalErrors(t *testing.T) {
	tests := []struct {
		name        string
		breakIt     func(t *testing.T, c *Controller)
		wantRetries int
	}{
		{name: "undecodable hook", breakIt: func(t *testing.T, c *Controller) {
			t.Helper()
			hooks := c.dyn.Resource(hooksv1.ExecutionHooksGVR()).Namespace("ns")
			u, err := hooks.Get(t.Context(), "h", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedField(u.Object, "not a list", "spec", "podContainerNamesList"); err != nil {
				t.Fatal(err)
			}
			if _, err := hooks.Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.get(t.Context(), "ns", "h"); !queue.IsTerminal(err) {
				t.Fatalf("get of an undecodable hook = %v, want a terminal error", err)
			}
		}},
		{name: "failing read", wantRetries: 1, breakIt: func(t *testing.T, c *Controller) {
			t.Helper()
			c.dyn.(*dynamicfake.FakeDynamicClient).PrependReactor("get", "executionhooks", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("connection refused")
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestController(t, baseHook(), testPods()...)
			tt.breakIt(t, c)
			c.queue.Add("ns/h")
			if !c.processNext(t.Context()) {
				t.Fatal("queue shut down")
			}
			if got := c.queue.NumRequeues("ns/h"); got != tt.wantRetries {
				t.Errorf("retries = %d, want %d", got, tt.wantRetries)
			}
		})
	}
}
