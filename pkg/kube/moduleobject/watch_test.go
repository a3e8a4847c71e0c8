package moduleobject

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestWriterRestoresEditedAndDeletedObject: a status someone else wrote,
// and then the object's deletion, are each undone restoreBaseDelay after
// the Writer sees them, with no change of the module's state.
func TestWriterRestoresEditedAndDeletedObject(t *testing.T) {
	r := startRigWith(t, Options{}, func(r *rig, dyn *fake.FakeDynamicClient) {
		dyn.PrependReactor("update", "modules", func(a k8stesting.Action) (bool, runtime.Object, error) {
			u := a.(k8stesting.UpdateAction).GetObject().(*unstructured.Unstructured)
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			r.log.add("update " + u.GetName() + "/" + a.GetSubresource() + " " + phase)
			return false, nil, nil // the tracker stores it
		})
	}, moduleObject("a", "ns"))
	r.watchSynced()
	tracker := r.w.opts.Dynamic.(*fake.FakeDynamicClient).Tracker()
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(time.Second)
	r.expect("the first write", "apply a/status Ready")
	r.handled(1)

	edited := moduleObject("a", "ns")
	if err := unstructured.SetNestedField(edited.Object, v1.PhaseFailed, "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := tracker.Update(v1.ModulesResource(), edited, ""); err != nil {
		t.Fatal(err)
	}
	r.eventually("the edit seen", func() bool {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		return r.w.check["a"]
	})
	r.clk.Step(restoreBaseDelay)
	r.expect("the edited status replaced", "update a/status Ready")
	r.handled(2)

	if err := tracker.Delete(v1.ModulesResource(), "", "a"); err != nil {
		t.Fatal(err)
	}
	r.eventually("the deletion seen", func() bool {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		return r.w.check["a"]
	})
	r.clk.Step(time.Minute) // the second restore within restoreQuiet waits twice as long
	r.expect("the deleted object created again", "apply a", "apply a/status Ready")
}

// TestWriterIgnoresItsOwnStatus: events whose status is the one written
// queue nothing.
func TestWriterIgnoresItsOwnStatus(t *testing.T) {
	r := startRig(t, Options{}, moduleObject("a", "ns"))
	r.watchSynced()
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(time.Second)
	r.expect("the first write", "apply a/status Ready")
	r.handled(1)
	r.w.mu.Lock()
	written := r.w.written["a"]
	r.w.mu.Unlock()
	own := moduleObject("a", "ns")
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.Module{Status: written})
	if err != nil {
		t.Fatal(err)
	}
	own.Object["status"] = obj["status"]
	r.w.observe(own, false)
	r.w.mu.Lock()
	checking := r.w.check["a"]
	r.w.mu.Unlock()
	if checking {
		t.Error("the Writer's own status queued a check")
	}
}

// TestRestoreDelay: a restore follows restoreBaseDelay after the change,
// doubling while someone keeps changing the object, up to restoreMaxDelay,
// and back to restoreBaseDelay after restoreQuiet without a change.
func TestRestoreDelay(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	w := New(Options{Dynamic: fake.NewSimpleDynamicClient(runtime.NewScheme()), Clock: clk})
	got := make([]time.Duration, 0, 12)
	for range 11 {
		w.mu.Lock()
		got = append(got, w.restoreDelay("a"))
		w.mu.Unlock()
		clk.Step(time.Second)
	}
	clk.Step(restoreQuiet)
	w.mu.Lock()
	got = append(got, w.restoreDelay("a"))
	w.mu.Unlock()
	want := []time.Duration{
		200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond,
		3200 * time.Millisecond, 6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond,
		51200 * time.Millisecond, time.Minute, time.Minute, 200 * time.Millisecond,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

// watchSynced waits until the Writer's watch has seen the objects there
// were at its start: their events come before anything the test does.
func (r *rig) watchSynced() {
	r.t.Helper()
	r.eventually("the watch synced", func() bool {
		r.w.mu.Lock()
		synced := r.w.watchSynced
		r.w.mu.Unlock()
		return synced != nil && synced()
	})
}
