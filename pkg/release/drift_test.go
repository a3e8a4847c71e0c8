package release

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// manifestReleases deploys every release with the same manifest.
type manifestReleases struct{ fakeReleases }

func (*manifestReleases) Apply(_ context.Context, r helm.Release) (helm.Outcome, error) {
	return helm.Outcome{Revision: 1, Manifest: "manifest of " + r.Name}, nil
}

// call is one call of fakeDrift.
type call struct{ op, manifest string }

// fakeDrift reports one drifted object for every manifest and sends
// each call on calls.
type fakeDrift struct{ calls chan call }

func (f *fakeDrift) Check(ctx context.Context, manifest string) ([]drift.Drift, error) {
	select {
	case f.calls <- call{"check", manifest}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []drift.Drift{{Object: drift.Object{APIVersion: "v1", Kind: "ConfigMap", Name: "c"}, Fields: []string{".data.a"}}}, nil
}

func (f *fakeDrift) Revert(ctx context.Context, manifest string, _ []drift.Drift) error {
	select {
	case f.calls <- call{"revert", manifest}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// driftManager returns a Manager with module "m" deployed (its first
// check taken), running RunDrift with the given options.
func driftManager(t *testing.T, opts Options) (*Manager, *fakeDrift, *clocktesting.FakeClock, chan<- heal.Change) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	// Unbuffered: a check waits until the test takes it, so each pass of
	// the loop sees the test's changes made before it takes the call.
	fd := &fakeDrift{calls: make(chan call)}
	opts.Releases, opts.Drift, opts.Clock, opts.Logger = &manifestReleases{}, fd, clk, slog.New(slog.DiscardHandler)
	r := New(opts)
	m := testModule(t, "m")
	deployed := make(chan struct{})
	go func() {
		defer close(deployed)
		<-fd.calls // the check after Deploy
		<-fd.calls // and its revert
	}()
	if _, _, err := r.Deploy(t.Context(), m, nil); err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	<-deployed
	changes := make(chan heal.Change)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- r.RunDrift(ctx, changes) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunDrift: %v", err)
		}
	})
	return r, fd, clk, changes
}

// testModule discovers a module with a chart named name.
func testModule(t *testing.T, name string) *module.Module {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "modules", name, "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{filepath.Join(dir, "modules")}, GlobalHooksDir: filepath.Join(dir, "global"),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	m, ok := set.Module(name)
	if !ok {
		t.Fatalf("module %s not discovered", name)
	}
	return m
}

// stepUntilCall advances clk by d whenever a timer waits on it, until
// the next call arrives, and returns that call.
func stepUntilCall(t *testing.T, clk *clocktesting.FakeClock, calls chan call, d time.Duration) call {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if clk.HasWaiters() {
			clk.Step(d)
		}
		select {
		case c := <-calls:
			return c
		case <-deadline:
			t.Fatal("no drift check")
			return call{}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func next(t *testing.T, calls chan call) call {
	t.Helper()
	select {
	case c := <-calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no drift check")
		return call{}
	}
}

func TestRunDriftChecksAfterAChange(t *testing.T) {
	_, fd, clk, changes := driftManager(t, Options{DriftDebounce: time.Second, HealDrift: true})
	for range 3 { // three changes in the window make one check
		changes <- heal.Change{Module: "m"}
	}
	got := []call{stepUntilCall(t, clk, fd.calls, time.Second), next(t, fd.calls)}
	want := []call{{"check", "manifest of m"}, {"revert", "manifest of m"}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(call{})); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	changes <- heal.Change{Module: "gone"} // no release: nothing to check
	changes <- heal.Change{Module: "m"}
	if c := stepUntilCall(t, clk, fd.calls, time.Second); c.op != "check" {
		t.Errorf("after the second change: %v, want a check", c)
	}
}

// fakeEvents sends whether each drift event said reverted.
type fakeEvents chan bool

func (f fakeEvents) ObjectDrifted(_, _ string, _ []string, reverted bool) { f <- reverted }

func TestRunDriftResyncAndMaintenance(t *testing.T) {
	events := make(fakeEvents, 10)
	r, fd, clk, _ := driftManager(t, Options{DriftDebounce: time.Second, DriftResync: time.Minute, HealDrift: true, Events: events})
	<-events // the first report, from Deploy
	r.SetMaintenance("m", true)
	r.module("m").reported = "" // report the same drift again
	if c := stepUntilCall(t, clk, fd.calls, time.Minute); c.op != "check" {
		t.Fatalf("on resync: %v, want a check", c)
	}
	if reverted := <-events; reverted {
		t.Error("drift of a module in maintenance reported as reverted")
	}
	r.SetMaintenance("m", false)
	// In maintenance the check reverted nothing: the first call of the
	// second resync is its check, then its revert.
	got := []call{stepUntilCall(t, clk, fd.calls, time.Minute), next(t, fd.calls)}
	if got[0].op != "check" || got[1].op != "revert" {
		t.Errorf("calls after maintenance = %v, want a check and a revert", got)
	}
	r.Forget("m")
	clk.Step(time.Minute)
	select {
	case c := <-fd.calls:
		t.Errorf("a forgotten module was checked: %v", c)
	default:
	}
}

// seenDrift is a fakeDrift that reports the resourceVersions it read.
type seenDrift struct{ fakeDrift }

func (f *seenDrift) CheckSeen(ctx context.Context, manifest string) ([]drift.Drift, map[drift.Object]string, error) {
	drifts, err := f.Check(ctx, manifest)
	return drifts, map[drift.Object]string{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c"}: "7"}, err
}

// Changes of objects at the resourceVersion the last check read, such as
// those of the module's own deploy, start no check.
func TestSeenChangesAreNoReason(t *testing.T) {
	fd := &seenDrift{fakeDrift{calls: make(chan call, 2)}}
	r := New(Options{Releases: &manifestReleases{}, Drift: fd, Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0)), Logger: slog.New(slog.DiscardHandler)})
	if _, _, err := r.Deploy(t.Context(), testModule(t, "m"), nil); err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	ref := heal.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c"}
	tests := []struct {
		name string
		ch   heal.Change
		want bool
	}{
		{"the version read", heal.Change{Module: "m", Object: ref, ResourceVersion: "7"}, true},
		{"a newer version", heal.Change{Module: "m", Object: ref, ResourceVersion: "8"}, false},
		{"another object", heal.Change{Module: "m", Object: heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "c"}, ResourceVersion: "7"}, false},
		{"another module", heal.Change{Module: "n", Object: ref, ResourceVersion: "7"}, false},
	}
	for _, tt := range tests {
		if got := r.seenAlready(tt.ch); got != tt.want {
			t.Errorf("%s: seenAlready = %v, want %v", tt.name, got, tt.want)
		}
	}
}
