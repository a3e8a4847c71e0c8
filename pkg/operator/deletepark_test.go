package operator

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// A disabled module's afterDeleteHelm hook whose process does not end
// holds neither the main queue nor a worker: with --module-workers=1,
// while it runs, a change of another module's section runs that module
// and a change of the global section converges (beforeAll hooks on main).
// The delete keeps its order (uninstall, afterDeleteHelm, values
// forgotten), and the converge's afterAll waits for its end.
func TestHungAfterDeleteHelmHoldsNeitherMainNorAWorker(t *testing.T) {
	runner := &blockingRunner{
		fakeRunner: &fakeRunner{},
		block:      "b:afterDeleteHelm", started: make(chan struct{}), release: make(chan struct{}),
	}
	o, rel := newTestOperator(t, runner.fakeRunner, func(o *options.Options) { o.ModuleWorkers = 1 })
	o.runner = runner
	rel.status = map[string]helm.Status{"b": {Revision: 1, State: "deployed", Owned: true}}
	runs := func(call string) int {
		runner.mu.Lock()
		defer runner.mu.Unlock()
		return runner.runs[call]
	}
	disabled := &config.Config{Enabled: map[string]bool{"b": false}}
	changed := &config.Config{
		Global: values.Values{"x": 1.0}, Modules: map[string]values.Values{"a": {"m": 1.0}}, Enabled: disabled.Enabled,
	}
	const (
		starting = iota
		disabling
		changing
		released
	)
	stage, beforeAlls := starting, 0
	runUntil(t, o, func() bool {
		switch stage {
		case starting:
			if o.Ready() {
				o.main.PushBack(applyConfigTask{config: disabled})
				stage = disabling
			}
		case disabling:
			select {
			case <-runner.started:
				beforeAlls = runs("global:beforeAll")
				o.main.PushBack(applyConfigTask{config: changed})
				stage = changing
			default:
			}
		case changing:
			if runs("a:beforeHelm") < 2 || runs("global:beforeAll") <= beforeAlls {
				return false
			}
			if st := o.state.get("b"); st.Phase != status.PhaseDeleting || !st.StartupDone {
				t.Fatalf("b while its afterDeleteHelm hook runs: phase %s, startup done %v; want Deleting, its state not reset yet", st.Phase, st.StartupDone)
			}
			if slices.Contains(runner.recorded(), "b:afterDeleteHelm") {
				t.Fatal("b's afterDeleteHelm hook ended before it was released")
			}
			close(runner.release)
			stage = released
		case released:
			st := o.state.get("b")
			return st.Phase == status.PhaseDisabled && !st.StartupDone && o.main.Len() == 0 &&
				runs("global:afterAll") >= 2
		}
		return false
	})
	calls := runner.recorded()
	uninstall, afterDelete := slices.Index(calls, "uninstall:b"), slices.Index(calls, "b:afterDeleteHelm")
	if uninstall < 0 || afterDelete < uninstall {
		t.Errorf("uninstall:b at %d, b:afterDeleteHelm at %d; want the uninstall first: %v", uninstall, afterDelete, calls)
	}
	// The first converge's afterAll, then the converges that wait for
	// the delete: theirs come after its end.
	for i, c := range calls {
		if c == "global:afterAll" && i < afterDelete && i > slices.Index(calls, "global:afterAll") {
			t.Errorf("a converge's afterAll at %d, before b's delete ended (%d): %v", i, afterDelete, calls)
		}
	}
}

// A delete whose afterDeleteHelm hook fails stays Deleting with its error
// while the pool retries it with backoff, and the converge waits: its
// purges, runs and afterAll follow once a retry succeeded.
func TestFailedDeleteRetriesOnThePoolAndTheConvergeWaits(t *testing.T) {
	runner := &fakeRunner{}
	runner.fail = func(call string) error {
		if call == "b:afterDeleteHelm" && runner.runs[call] == 1 { // called with runner.mu held
			return errors.New("exit status 1")
		}
		return nil
	}
	o, rel := newTestOperator(t, runner, func(o *options.Options) { o.Retry.Delay, o.Retry.MaxDelay = time.Hour, time.Hour })
	rel.owned = []string{"b", "gone"}
	retried := false
	runUntilWith(t, o, &config.Config{Enabled: map[string]bool{"b": false}}, func() bool {
		if !retried {
			st := o.state.get("b")
			if st.LastError == "" || !o.pool.BackingOff("b") {
				return false
			}
			if st.Phase != status.PhaseDeleting || slices.Contains(runner.recorded(), "uninstall:gone") {
				t.Fatalf("b backing off after its delete failed: phase %s, calls %v; want Deleting, the converge waiting", st.Phase, runner.recorded())
			}
			o.RetryFailedNow() // the backoff is an hour
			retried = true
		}
		return o.Ready()
	})
	want := []string{
		"global:onStartup",
		"global:beforeAll",
		"b:afterDeleteHelm", "b:afterDeleteHelm",
		"uninstall:gone",
		"a:onStartup", "a:beforeHelm", "helm:a", "a:afterHelm",
		"global:afterAll",
	}
	if diff := cmp.Diff(want, runner.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if st := o.state.get("b"); st.Phase != status.PhaseDisabled || st.LastError != "" {
		t.Errorf("b after its delete: phase %s, last error %q; want Disabled, none", st.Phase, st.LastError)
	}
}
