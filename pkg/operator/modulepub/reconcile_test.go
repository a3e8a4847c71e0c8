package modulepub

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
)

// requestWriter is a fakeWriter that hears reconcile requests, as
// *moduleobject.Writer does.
type requestWriter struct {
	fakeWriter
	request func(module, value string)
}

func (w *requestWriter) OnReconcileRequest(f func(module, value string)) { w.request = f }

// TestReconcileRequests: a request heard before the first plan waits for
// it; an enabled module runs and its value is published once the run
// ended, failed or not; a disabled one is handled at once; an unknown
// module is ignored.
func TestReconcileRequests(t *testing.T) {
	w := &requestWriter{}
	var ran []string
	var done []func(error)
	p := New(w, discover(t), "ns", func(name string) moduleobject.State {
		return moduleobject.State{Enabled: name == "a"}
	}, func(name string, d func(error)) { ran = append(ran, name); done = append(done, d) })
	handled := func(name string) string {
		t.Helper()
		for i := len(w.updates) - 1; i >= 0; i-- {
			if w.updates[i].Name == name {
				return w.updates[i].LastHandledReconcileAt
			}
		}
		return ""
	}

	w.request("a", "t1")
	w.request("nope", "t1")
	if len(ran) != 0 {
		t.Fatalf("ran %v before the first plan", ran)
	}
	p.Planned()
	if diff := cmp.Diff([]string{"a"}, ran); diff != "" {
		t.Fatalf("runs after the plan (-want +got):\n%s", diff)
	}
	if got := handled("a"); got != "" {
		t.Errorf("handled %q before the run ended", got)
	}
	done[0](errors.New("boom"))
	if got := handled("a"); got != "t1" {
		t.Errorf("handled %q after the run, want t1", got)
	}
	w.request("b", "t2") // disabled: nothing to run
	if got := handled("b"); got != "t2" || len(ran) != 1 {
		t.Errorf("disabled b: handled %q, runs %v; want t2 and no run", got, ran)
	}
	p.Publish("a")
	if got := handled("a"); got != "t1" {
		t.Errorf("a later publish lost the handled request: %q", got)
	}
}
