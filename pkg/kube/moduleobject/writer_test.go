package moduleobject

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// apiLog records the writes a Writer sends, as "verb name[/sub] [phase]".
type apiLog struct {
	mu     sync.Mutex
	writes []string
}

func (l *apiLog) add(s string) { l.mu.Lock(); l.writes = append(l.writes, s); l.mu.Unlock() }

// take returns the writes since the last take.
func (l *apiLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.writes
	l.writes = nil
	return out
}

func moduleObject(name, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1.APIVersion)
	u.SetKind(v1.KindModule)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	u.SetLabels(map[string]string{NamespaceLabel: ns})
	return u
}

func fakeAPI(t *testing.T, log *apiLog, objs ...runtime.Object) *fake.FakeDynamicClient {
	t.Helper()
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{v1.ModulesResource(): "ModuleList"}, objs...)
	dyn.PrependReactor("patch", "modules", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		var m v1.Module
		if err := json.Unmarshal(p.GetPatch(), &m); err != nil {
			t.Errorf("apply of %s: %v", p.GetName(), err)
		}
		if p.GetSubresource() == "status" {
			log.add("apply " + p.GetName() + "/status " + m.Status.Phase)
		} else {
			log.add("apply " + p.GetName())
		}
		return true, moduleObject(p.GetName(), "ns"), nil
	})
	dyn.PrependReactor("delete", "modules", func(a k8stesting.Action) (bool, runtime.Object, error) {
		log.add("delete " + a.(k8stesting.DeleteAction).GetName())
		return true, nil, nil
	})
	return dyn
}

// TestWriterCoalescesAndWritesChangesOnly: nothing is written before the
// first Prune; then the gone module's object is deleted (only this
// operator's), a burst of states is one create and one status write, an
// unchanged state writes nothing, and a change writes the status again.
func TestWriterCoalescesAndWritesChangesOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &apiLog{}
		dyn := fakeAPI(t, log, moduleObject("gone", "ns"), moduleObject("foreign", "other-ns"))
		w := New(Options{Dynamic: dyn, Namespace: "ns", Interval: time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		settle := func() { <-time.After(2 * time.Second); synctest.Wait() }

		for _, p := range []status.Phase{status.PhaseWaiting, status.PhaseRunning, status.PhaseReady} {
			w.Update(State{Name: "a", Enabled: true, Phase: p})
		}
		settle()
		if got := log.take(); len(got) != 0 {
			t.Errorf("writes before Prune: %v", got)
		}
		w.Prune([]string{"a"})
		settle()
		// The delete runs beside the writes of a; a's writes are in order.
		first := log.take()
		slices.Sort(first)
		if diff := cmp.Diff([]string{"apply a", "apply a/status Ready", "delete gone"}, first); diff != "" {
			t.Errorf("first writes (-want +got):\n%s", diff)
		}
		if _, ok := w.Ref("a"); !ok {
			t.Error("no reference to the object of a after it was created")
		}
		w.Update(State{Name: "a", Enabled: true, Phase: status.PhaseReady})
		settle()
		if got := log.take(); len(got) != 0 {
			t.Errorf("writes of an unchanged state: %v", got)
		}
		w.Update(State{Name: "a", Enabled: true, Phase: status.PhaseFailed, LastError: "boom"})
		settle()
		if diff := cmp.Diff([]string{"apply a/status Failed"}, log.take()); diff != "" {
			t.Errorf("writes of a change (-want +got):\n%s", diff)
		}
		if w.Writes() != 4 {
			t.Errorf("Writes() = %d, want 4", w.Writes())
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
}

// TestWriterOffWithoutCRD: a 404 on the first list turns the writer off:
// Run returns, Update does nothing, no reference is handed out.
func TestWriterOffWithoutCRD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &apiLog{}
		dyn := fakeAPI(t, log)
		dyn.PrependReactor("list", "modules", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(v1.ModulesResource().GroupResource(), "")
		})
		w := New(Options{Dynamic: dyn, Namespace: "ns"})
		if err := w.Run(t.Context()); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		w.Update(State{Name: "a", Enabled: true})
		w.Prune([]string{"a"})
		if _, ok := w.Ref("a"); ok || len(log.take()) != 0 {
			t.Error("a writer that is off wrote or handed out a reference")
		}
	})
}

// TestWriterHold: held writes wait past Interval, until the hold is
// released or HoldMax passed.
func TestWriterHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &apiLog{}
		w := New(Options{Dynamic: fakeAPI(t, log), Namespace: "ns", Interval: time.Second, HoldMax: 10 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = w.Run(ctx) }()
		w.Prune([]string{"a"})
		w.Hold(true)
		w.Update(State{Name: "a", Enabled: true, Phase: status.PhaseRunning})
		<-time.After(3 * time.Second)
		synctest.Wait()
		if got := log.take(); len(got) != 0 {
			t.Errorf("writes while held, before HoldMax: %v", got)
		}
		w.Hold(false)
		synctest.Wait()
		if diff := cmp.Diff([]string{"apply a", "apply a/status Reconciling"}, log.take()); diff != "" {
			t.Errorf("writes on release (-want +got):\n%s", diff)
		}
		w.Hold(true)
		w.Update(State{Name: "a", Enabled: true, Phase: status.PhaseReady})
		<-time.After(11 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"apply a/status Ready"}, log.take()); diff != "" {
			t.Errorf("writes after HoldMax (-want +got):\n%s", diff)
		}
	})
}

// TestWriterHoldBegunDuringABurst: a hold that begins while a burst is
// collected holds it too.
func TestWriterHoldBegunDuringABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &apiLog{}
		w := New(Options{Dynamic: fakeAPI(t, log), Namespace: "ns", Interval: time.Second, HoldMax: 10 * time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = w.Run(ctx) }()
		w.Prune([]string{"a"})
		w.Update(State{Name: "a", Enabled: true, Phase: status.PhaseWaiting})
		<-time.After(100 * time.Millisecond)
		w.Hold(true)
		<-time.After(3 * time.Second)
		synctest.Wait()
		if got := log.take(); len(got) != 0 {
			t.Errorf("writes of a burst a hold began in: %v", got)
		}
		w.Hold(false)
		synctest.Wait()
		if diff := cmp.Diff([]string{"apply a", "apply a/status Pending"}, log.take()); diff != "" {
			t.Errorf("writes on release (-want +got):\n%s", diff)
		}
	})
}
