package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// gateReadiness holds the readiness wait of the modules in gates until
// their channel is closed, reporting a Deployment that is not available.
type gateReadiness struct {
	gates map[string]chan struct{} // by namespace
	waits atomic.Int32             // Wait calls for gated namespaces
}

func (g *gateReadiness) Wait(ctx context.Context, ns string, _ []readiness.Object, _ time.Duration, _ <-chan struct{}, progress func(readiness.Pending)) error {
	gate, ok := g.gates[ns]
	if !ok {
		return nil
	}
	g.waits.Add(1)
	progress(readiness.Pending{Object: readiness.Object{Kind: "Deployment", Namespace: ns, Name: "x"}, Message: "Available: 1/3"})
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// poll waits for cond, failing the test after a generous deadline.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
		<-time.After(time.Millisecond)
	}
}

func TestDependentWaitsForItsRequirementWhileAnIndependentModuleGoesOn(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"modules/values.yaml":           "crdEnabled: true\nappEnabled: true\notherEnabled: true\nlegacyEnabled: true\n",
		"modules/crd/module.yaml":       "weight: 10\nnamespace: crd-system\n",
		"modules/crd/templates/cm.yaml": "kind: ConfigMap",
		"modules/app/module.yaml":       "weight: 20\nrequires: {crd: \"\"}\n",
		"modules/app/hooks/mod":         "",
		"modules/other/module.yaml":     "weight: 30\n",
		"modules/other/hooks/mod":       "",
		"modules/040-legacy/hooks/mod":  "",
		"global-hooks/hooks/global":     "",
	})
	runner := &fakeRunner{configs: map[string]string{
		"mod":    "configVersion: v1\nbeforeHelm: 1\n",
		"global": "configVersion: v1\nafterAll: 1\n",
	}}
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Discovery.GlobalHooksDir, opts.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	opts.Retry.Delay, opts.Retry.MaxDelay = time.Millisecond, time.Millisecond
	gate := make(chan struct{})
	o, err := New(opts, Deps{
		Hooks: runner, Releases: &fakeReleaser{runner: runner}, Config: (&fakeConfig{}).source,
		Readiness: &gateReadiness{gates: map[string]chan struct{}{"crd-system": gate}},
		Clock:     clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	o.main.PushBack(applyConfigTask{config: &config.Config{}}, startupTask{})
	go func() { done <- o.main.Run(ctx, o.handle) }()
	go func() { done <- o.pool.Run(ctx) }()
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}()

	called := func(call string) func() bool {
		return func() bool { return slices.Contains(runner.recorded(), call) }
	}
	// other requires nothing; legacy (no module.yaml) waits for the first
	// attempts of every lower order, which crd's is not done with.
	poll(t, "other runs", called("other:beforeHelm"))
	poll(t, "crd's status names the object awaited", func() bool {
		return o.state.get("crd").Message == "waiting for Deployment crd-system/x: Available: 1/3"
	})
	if got := o.state.get("app"); got.Phase != status.PhaseWaiting || got.Message != "waiting for module crd to be ready" {
		t.Errorf("app while crd is not ready: phase %s, message %q", got.Phase, got.Message)
	}
	for _, call := range []string{"app:beforeHelm", "legacy:beforeHelm", "global:afterAll"} {
		if called(call)() {
			t.Errorf("%s ran before crd was ready", call)
		}
	}

	close(gate)
	poll(t, "app runs once crd is ready", called("app:beforeHelm"))
	poll(t, "the converge ends", o.Ready)
	calls := runner.recorded()
	if i, j := slices.Index(calls, "app:beforeHelm"), slices.Index(calls, "legacy:beforeHelm"); i < 0 || j < 0 {
		t.Errorf("calls %v lack app or legacy", calls)
	}
	if got := o.state.get("crd"); got.Phase != status.PhaseReady || got.Message != "" {
		t.Errorf("crd once ready: phase %s, message %q", got.Phase, got.Message)
	}
	ms := o.Modules()
	if ms[0].Name != "crd" || ms[0].Namespace != "crd-system" || ms[1].Name != "app" || ms[1].Namespace != "ns" || !slices.Equal(ms[1].Requires, []string{"crd"}) {
		t.Errorf("module statuses %+v", ms)
	}
}

func TestDisabledRequirementDisablesItsDependent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"modules/values.yaml":     "appEnabled: true\n",
		"modules/crd/module.yaml": "weight: 10\n",
		"modules/crd/hooks/mod":   "",
		"modules/app/module.yaml": "weight: 20\nrequires: {crd: \"\"}\n",
		"modules/app/hooks/mod":   "",
	})
	runner := &fakeRunner{configs: map[string]string{"mod": "configVersion: v1\nbeforeHelm: 1\n"}}
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Namespace = filepath.Join(dir, "modules"), "ns"
	o, err := New(opts, Deps{
		Hooks: runner, Releases: &fakeReleaser{runner: runner}, Config: (&fakeConfig{}).source,
		Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, o, o.Ready)
	ms := o.Modules()
	app := ms[slices.IndexFunc(ms, func(m status.ModuleStatus) bool { return m.Name == "app" })]
	if app.Enabled || app.By != status.SourceRequirement || app.Message != "requires crd, which is disabled" {
		t.Errorf("app = %+v, want disabled by its requirement", app)
	}
	if slices.Contains(runner.recorded(), "app:beforeHelm") {
		t.Error("app ran without its requirement")
	}
}

func TestNewInputsEndAReadinessWait(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"modules/values.yaml":           "webEnabled: true\n",
		"modules/web/module.yaml":       "namespace: web\n",
		"modules/web/templates/cm.yaml": "kind: ConfigMap",
	})
	runner := &fakeRunner{}
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Namespace = filepath.Join(dir, "modules"), "ns"
	gate := make(chan struct{})
	ready := &gateReadiness{gates: map[string]chan struct{}{"web": gate}}
	o, err := New(opts, Deps{
		Hooks: runner, Releases: &fakeReleaser{runner: runner}, Config: (&fakeConfig{}).source, Readiness: ready,
		Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	runUntil(t, o, func() bool {
		switch {
		case !waited && ready.waits.Load() == 1:
			// The ConfigMap section changed while web waits for its
			// objects: the wait ends and the new run waits instead.
			waited = true
			o.pool.RetryNow("web", nil)
		case waited && ready.waits.Load() == 2:
			close(gate)
			return true
		}
		return false
	})
	if got := o.state.get("web"); got.LastError != "" {
		t.Errorf("web's last error %q: a wait ended by new inputs is no failure", got.LastError)
	}
	if n := o.pool.Failures("web"); n != 0 {
		t.Errorf("web failures = %d, want 0", n)
	}
}

func TestReadinessWaitHoldsNoWorker(t *testing.T) {
	files := map[string]string{"modules/values.yaml": "stuckEnabled: true\noneEnabled: true\ntwoEnabled: true\nthreeEnabled: true\n"}
	for i, name := range []string{"stuck", "one", "two", "three"} {
		files["modules/"+name+"/module.yaml"] = fmt.Sprintf("weight: %d\nnamespace: %s\n", 10*(i+1), name)
		files["modules/"+name+"/templates/cm.yaml"] = "kind: ConfigMap"
		files["modules/"+name+"/hooks/mod"] = ""
	}
	runner := &fakeRunner{configs: map[string]string{"mod": "configVersion: v1\nafterHelm: 1\n"}}
	gate := make(chan struct{})
	o := newTreeOperator(t, files, Deps{Hooks: runner, Readiness: &gateReadiness{gates: map[string]chan struct{}{"stuck": gate}}},
		func(o *options.Options) { o.ModuleWorkers = 1 }) // stuck's wait would hold the only worker
	called := func(call string) bool { return slices.Contains(runner.recorded(), call) }
	phase := func(name string) status.Phase { return o.state.get(name).Phase }
	opened := false
	runUntil(t, o, func() bool {
		if !opened {
			// Every other module runs to its end while stuck waits.
			if phase("one") != status.PhaseReady || phase("two") != status.PhaseReady || phase("three") != status.PhaseReady {
				return false
			}
			if got := o.pool.Parked(); !slices.Equal(got, []string{"stuck"}) {
				t.Errorf("parked modules %v, want [stuck]", got)
			}
			if phase("stuck") != status.PhaseRunning || called("stuck:afterHelm") {
				t.Errorf("stuck before its objects are ready: phase %s, afterHelm ran %v", phase("stuck"), called("stuck:afterHelm"))
			}
			close(gate)
			opened = true
		}
		return phase("stuck") == status.PhaseReady
	})
	if !called("stuck:afterHelm") {
		t.Error("stuck's afterHelm hooks did not run once it was ready")
	}
}

func TestReadinessTimeoutFailsOnlyThatModule(t *testing.T) {
	notReady := &readiness.NotReadyError{Timeout: time.Minute, Pending: readiness.Pending{
		Object: readiness.Object{Kind: "Deployment", Namespace: "never", Name: "x"}, Message: "Available: 0/1",
	}}
	o := newTreeOperator(t, map[string]string{
		"modules/values.yaml":             "neverEnabled: true\nfineEnabled: true\n",
		"modules/never/module.yaml":       "weight: 10\nnamespace: never\n",
		"modules/never/templates/cm.yaml": "kind: ConfigMap",
		"modules/fine/module.yaml":        "weight: 20\nnamespace: fine\n",
		"modules/fine/templates/cm.yaml":  "kind: ConfigMap",
	}, Deps{Readiness: failingReadiness{ns: "never", err: notReady}}, func(o *options.Options) {
		o.ModuleWorkers = 1
		o.Retry.Delay, o.Retry.MaxDelay = time.Hour, time.Hour
	})
	runUntil(t, o, func() bool {
		return o.state.get("never").Phase == status.PhaseFailed && o.state.get("fine").Phase == status.PhaseReady
	})
	if got, want := o.state.get("never").LastError, "module never: not ready after 1m0s: Deployment never/x: Available: 0/1"; got != want {
		t.Errorf("never's last error %q, want %q", got, want)
	}
	if !o.pool.BackingOff("never") {
		t.Error("a module whose objects never became ready is not retried with backoff")
	}
}

// failingReadiness fails the wait of the release in namespace ns with err.
type failingReadiness struct {
	ns  string
	err error
}

func (f failingReadiness) Wait(_ context.Context, ns string, _ []readiness.Object, _ time.Duration, _ <-chan struct{}, _ func(readiness.Pending)) error {
	if ns == f.ns {
		return f.err
	}
	return nil
}

// failThenGate fails the first readiness wait and holds the next ones
// until gate is closed.
type failThenGate struct {
	calls atomic.Int32
	gate  chan struct{}
}

func (f *failThenGate) Wait(ctx context.Context, _ string, _ []readiness.Object, _ time.Duration, _ <-chan struct{}, _ func(readiness.Pending)) error {
	if f.calls.Add(1) == 1 {
		return errors.New("Deployment web/x: not ready after 5m")
	}
	select {
	case <-f.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestRetryingModuleStaysFailedUntilARunSucceeds(t *testing.T) {
	ready := &failThenGate{gate: make(chan struct{})}
	o := newTreeOperator(t, map[string]string{
		"modules/values.yaml":           "webEnabled: true\n",
		"modules/web/module.yaml":       "namespace: web\n",
		"modules/web/templates/cm.yaml": "kind: ConfigMap",
	}, Deps{Readiness: ready}, func(o *options.Options) { o.Retry.Delay, o.Retry.MaxDelay = time.Millisecond, time.Millisecond })
	opened := false
	runUntil(t, o, func() bool {
		if !opened && ready.calls.Load() == 2 {
			// The retry waits for its objects: still Failed, with the error.
			if got := o.state.get("web"); got.Phase != status.PhaseFailed || got.LastError == "" {
				t.Errorf("web while its retry runs: phase %s, last error %q; want Failed with the error", got.Phase, got.LastError)
			}
			close(ready.gate)
			opened = true
		}
		return opened && o.state.get("web").Phase == status.PhaseReady
	})
}

func TestOrderGroupWaitsForTheHelmStepNotForReadiness(t *testing.T) {
	runner := &fakeRunner{configs: map[string]string{
		"mod":    "configVersion: v1\nbeforeHelm: 1\n",
		"global": "configVersion: v1\nafterAll: 1\n",
	}}
	gate := make(chan struct{})
	o := newTreeOperator(t, map[string]string{
		"modules/values.yaml":                "slowEnabled: true\nnextEnabled: true\n",
		"modules/010-slow/templates/cm.yaml": "kind: ConfigMap",
		"modules/010-slow/hooks/mod":         "",
		"modules/020-next/hooks/mod":         "",
		"global-hooks/hooks/global":          "",
	}, Deps{Hooks: runner, Readiness: &gateReadiness{gates: map[string]chan struct{}{"ns": gate}}}, nil) // every release waits
	called := func(call string) bool { return slices.Contains(runner.recorded(), call) }
	opened := false
	runUntil(t, o, func() bool {
		if !opened {
			// slow's release is applied and waits: next, of the higher
			// order, starts; afterAll waits for every first attempt.
			if !called("next:beforeHelm") {
				return false
			}
			if o.state.get("slow").Phase == status.PhaseReady || called("global:afterAll") {
				t.Errorf("before slow's objects are ready: slow %s, afterAll ran %v", o.state.get("slow").Phase, called("global:afterAll"))
			}
			close(gate)
			opened = true
		}
		return called("global:afterAll")
	})
}

func TestModuleWhoseFilesCannotBeReadIsNotDeleted(t *testing.T) {
	runner := &fakeRunner{}
	rel := &fakeReleaser{runner: runner, owned: []string{"lost", "ok"}, status: map[string]helm.Status{"lost": {}}}
	o := newTreeOperator(t, map[string]string{
		"modules/values.yaml": "okEnabled: true\n",
		// Its own values.yaml enabled it; now it does not parse, so
		// nothing enables it, and its release is still there.
		"modules/010-lost/values.yaml":       "lostEnabled: [true\n",
		"modules/010-lost/templates/cm.yaml": "kind: ConfigMap",
		"modules/020-ok/templates/cm.yaml":   "kind: ConfigMap",
	}, Deps{Hooks: runner, Releases: rel}, nil)
	runUntil(t, o, o.Ready)
	if calls := runner.recorded(); slices.Contains(calls, "uninstall:lost") || !slices.Contains(calls, "helm:ok") {
		t.Errorf("calls %v: want ok deployed and lost's release left alone", calls)
	}
}

// newTreeOperator returns an operator over the tree in files (modules
// under modules/, global hooks under global-hooks/), with namespace "ns",
// deps' seams set as given (Hooks, Releases, Config, Clock and Logger
// default to fakes) and opts changed by tweak.
func newTreeOperator(t *testing.T, files map[string]string, deps Deps, tweak func(*options.Options)) *Operator {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Discovery.GlobalHooksDir, opts.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	if tweak != nil {
		tweak(&opts)
	}
	runner, _ := deps.Hooks.(*fakeRunner)
	if deps.Hooks == nil {
		runner = &fakeRunner{}
		deps.Hooks = runner
	}
	if deps.Releases == nil {
		deps.Releases = &fakeReleaser{runner: runner}
	}
	if deps.Config == nil {
		deps.Config = (&fakeConfig{}).source
	}
	deps.Clock, deps.Logger = clock.RealClock{}, slog.New(slog.DiscardHandler)
	o, err := New(opts, deps)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
