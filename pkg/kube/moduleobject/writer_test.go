package moduleobject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

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

// rig runs a Writer on a fake clock against a fake API.
type rig struct {
	t      *testing.T
	w      *Writer
	clk    *clocktesting.FakeClock
	log    *apiLog
	cancel context.CancelFunc
	done   chan error
}

const rigTimeout = 30 * time.Second

func startRig(t *testing.T, opts Options, objs ...runtime.Object) *rig {
	t.Helper()
	return startRigWith(t, opts, nil, objs...)
}

// startRigWith is startRig with reactors that react gives the fake API
// before the Writer starts: the fake's reactor list may not change while
// the Writer's watch uses it.
func startRigWith(t *testing.T, opts Options, react func(*rig, *fake.FakeDynamicClient), objs ...runtime.Object) *rig {
	t.Helper()
	r := &rig{t: t, clk: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), log: &apiLog{}, done: make(chan error, 1)}
	dyn := fakeAPI(t, r.log, objs...)
	if react != nil {
		react(r, dyn)
	}
	opts.Dynamic, opts.Namespace, opts.Clock = dyn, "ns", r.clk
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	r.w = New(opts)
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() { r.done <- r.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	r.eventually("the writer started", func() bool {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		return r.w.queue != nil
	})
	return r
}

// eventually polls cond until it holds or rigTimeout passes.
func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(rigTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// handled waits until the writer has handled n queue keys in all.
func (r *rig) handled(n int64) {
	r.t.Helper()
	r.eventually(fmt.Sprintf("%d keys handled", n), func() bool { return r.w.handled.Load() >= n })
}

// expect waits for len(want) writes since the last expect and compares
// them with want.
func (r *rig) expect(what string, want ...string) {
	r.t.Helper()
	var got []string
	r.eventually(what, func() bool {
		got = append(got, r.log.take()...)
		return len(got) >= len(want)
	})
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func (r *rig) nothingWritten(what string) {
	r.t.Helper()
	if got := r.log.take(); len(got) != 0 {
		r.t.Errorf("%s: wrote %v", what, got)
	}
}

func state(phase status.Phase) State { return State{Name: "a", Enabled: true, Phase: phase} }

// TestWriterQuickRunIsOneWrite: a run that goes Reconciling -> Ready
// within Interval is one write, of Ready with its last-run time; the same
// state again writes nothing.
func TestWriterQuickRunIsOneWrite(t *testing.T) {
	r := startRig(t, Options{})
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseWaiting))
	r.w.Update(state(status.PhaseRunning))
	r.clk.Step(400 * time.Millisecond)
	ready := state(status.PhaseReady)
	ready.LastRun, ready.LastRunDuration = r.clk.Now(), 400*time.Millisecond
	r.w.Update(ready)
	r.clk.Step(600 * time.Millisecond)
	r.expect("writes of a quick run", "apply a", "apply a/status Ready")
	r.handled(1)
	r.w.mu.Lock()
	last := r.w.written["a"].LastRunTime
	r.w.mu.Unlock()
	if last == nil || !last.Time.Equal(ready.LastRun.Truncate(time.Second)) {
		t.Errorf("lastRunTime = %v, want %s", last, ready.LastRun)
	}

	r.w.Update(ready)
	r.clk.Step(time.Second)
	r.handled(2)
	r.nothingWritten("an unchanged state")
	if got := r.w.Writes(); got != 2 {
		t.Errorf("Writes() = %d, want 2", got)
	}
}

// TestWriterLongRunShowsReconciling: a run longer than Interval shows
// Reconciling, Interval after it began, then Ready.
func TestWriterLongRunShowsReconciling(t *testing.T) {
	r := startRig(t, Options{})
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseRunning))
	r.clk.Step(time.Second)
	r.expect("writes of a run under way", "apply a", "apply a/status Reconciling")
	r.clk.Step(5 * time.Second)
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(999 * time.Millisecond)
	r.handled(1)
	r.nothingWritten("a change younger than Interval")
	r.clk.Step(time.Millisecond)
	r.expect("writes of the end of the run", "apply a/status Ready")
}

// TestWriterNothingBeforePruneThenDeletesGone: nothing is written before
// the first Prune; then the gone module's object (only this operator's) is
// deleted and the changes recorded before are written.
func TestWriterNothingBeforePruneThenDeletesGone(t *testing.T) {
	r := startRig(t, Options{}, moduleObject("gone", "ns"), moduleObject("foreign", "other-ns"))
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(5 * time.Second)
	if n := r.w.handled.Load(); n != 0 {
		t.Errorf("%d keys handled before Prune", n)
	}
	r.nothingWritten("before Prune")
	r.w.Prune([]string{"a"})
	r.expect("deletion of the gone module's object", "delete gone")
	r.clk.Step(time.Second)
	r.expect("writes after Prune", "apply a", "apply a/status Ready")
	if _, ok := r.w.Ref("a"); !ok {
		t.Error("no reference to the object of a after it was created")
	}
	if _, ok := r.w.Ref("gone"); ok {
		t.Error("a reference to the deleted object of gone")
	}
}

// TestWriterHold: held changes wait past Interval, until the hold is
// released or HoldMax passed since the first of them.
func TestWriterHold(t *testing.T) {
	r := startRig(t, Options{HoldMax: 10 * time.Second})
	r.w.Prune([]string{"a"})
	r.w.Hold(true)
	r.w.Update(state(status.PhaseRunning))
	r.clk.Step(3 * time.Second)
	r.handled(1)
	r.nothingWritten("held, before HoldMax")
	r.w.Hold(false)
	r.expect("writes on release", "apply a", "apply a/status Reconciling")

	r.w.Hold(true)
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(time.Second)
	r.handled(3)
	r.nothingWritten("held again, before HoldMax")
	r.clk.Step(9 * time.Second)
	r.expect("writes after HoldMax", "apply a/status Ready")
}

// TestWriterHoldBegunAfterAChange: a hold that begins while a change
// waits for its Interval holds it too.
func TestWriterHoldBegunAfterAChange(t *testing.T) {
	r := startRig(t, Options{HoldMax: 10 * time.Second})
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseWaiting))
	r.clk.Step(100 * time.Millisecond)
	r.w.Hold(true)
	r.clk.Step(3 * time.Second)
	r.handled(1)
	r.nothingWritten("a change a hold began after")
	r.w.Hold(false)
	r.expect("writes on release", "apply a", "apply a/status Pending")
}

// TestWriterFlushesAtShutdown: when Run's context ends, the states not
// yet written (here held) are written before Run returns; changes after
// that are not.
func TestWriterFlushesAtShutdown(t *testing.T) {
	r := startRig(t, Options{})
	r.w.Prune([]string{"a", "b"})
	r.w.Hold(true)
	r.w.Update(state(status.PhaseReady))
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	r.done <- nil // for the cleanup
	r.expect("writes at shutdown", "apply a", "apply a/status Ready")
	r.w.Update(State{Name: "b", Enabled: true, Phase: status.PhaseFailed, LastError: "context canceled"})
	r.w.mu.Lock()
	_, pending := r.w.since["b"]
	r.w.mu.Unlock()
	if pending {
		t.Error("a change after shutdown was recorded")
	}
}

// TestWriterRetriesWithBackoff: a failed status write is retried after
// the rate limiter's delay, and writes the state then wanted.
func TestWriterRetriesWithBackoff(t *testing.T) {
	log := &apiLog{}
	fail := true
	r := startRigWith(t, Options{}, func(_ *rig, dyn *fake.FakeDynamicClient) {
		dyn.PrependReactor("patch", "modules", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetSubresource() == "status" && fail {
				fail = false
				log.add("failed")
				return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
			}
			return false, nil, nil
		})
	})
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseRunning))
	r.clk.Step(time.Second)
	r.expect("writes before the failure", "apply a")
	r.eventually("the failed write", func() bool { return len(log.take()) == 1 })
	r.handled(1)
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(retryBaseDelay)
	r.expect("writes of the retry", "apply a/status Ready")
}

// TestWriterOffWithoutCRD: a 404 on the first list turns the writer off:
// Run returns, Update does nothing, no reference is handed out.
func TestWriterOffWithoutCRD(t *testing.T) {
	log := &apiLog{}
	dyn := fakeAPI(t, log)
	dyn.PrependReactor("list", "modules", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(v1.ModulesResource().GroupResource(), "")
	})
	w := New(Options{Dynamic: dyn, Namespace: "ns", Clock: clocktesting.NewFakeClock(time.Now())})
	if err := w.Run(t.Context()); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	w.Update(State{Name: "a", Enabled: true})
	w.Prune([]string{"a"})
	if _, ok := w.Ref("a"); ok || len(log.take()) != 0 {
		t.Error("a writer that is off wrote or handed out a reference")
	}
}

// TestWriterOffWhenAWriteIsForbidden: a 403 on a write turns the writer
// off and Run returns.
func TestWriterOffWhenAWriteIsForbidden(t *testing.T) {
	r := startRigWith(t, Options{}, func(_ *rig, dyn *fake.FakeDynamicClient) {
		dyn.PrependReactor("patch", "modules", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(v1.ModulesResource().GroupResource(), "a", errors.New("no rights"))
		})
	})
	r.w.Prune([]string{"a"})
	r.w.Update(state(status.PhaseReady))
	r.clk.Step(time.Second)
	if err := <-r.done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	r.done <- nil // for the cleanup
	if _, ok := r.w.Ref("a"); ok {
		t.Error("a writer that is off handed out a reference")
	}
}
