package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/operator/configwatch"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// fakeRunner stands in for the hook executor: configs come from a map, runs
// are recorded as "<dir>/<hook>:<binding>" and may return patches.
type fakeRunner struct {
	mu      sync.Mutex
	configs map[string]string // by hook base name
	// configOf, when set, answers for the hooks whose path it knows.
	configOf func(path string) (string, bool)
	// configRuns counts Config calls by hook path.
	configRuns map[string]int
	calls      []string
	// patch returns the values patch for a run, or nil.
	patch func(call string, n int) values.Patch
	// fail returns the error of a run, or nil.
	fail func(call string) error
	runs map[string]int
	// contexts holds each run's binding contexts, in run order.
	contexts [][]hook.BindingContext
}

func (f *fakeRunner) Config(_ context.Context, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configRuns == nil {
		f.configRuns = map[string]int{}
	}
	f.configRuns[path]++
	if f.configOf != nil {
		if cfg, ok := f.configOf(path); ok {
			return []byte(cfg), nil
		}
	}
	return []byte(f.configs[filepath.Base(path)]), nil
}

func (f *fakeRunner) Run(_ context.Context, r hook.Run) (*hook.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	who := r.Module
	if who == "" {
		who = "global"
	}
	call := who + ":" + r.Binding
	if r.Kind == hook.RunEnabledScript {
		call = who + ":enabled"
	}
	f.calls = append(f.calls, call)
	f.contexts = append(f.contexts, r.Contexts)
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	f.runs[call]++
	if f.fail != nil {
		if err := f.fail(call); err != nil {
			return nil, err
		}
	}
	res := &hook.Result{}
	if r.Kind == hook.RunEnabledScript {
		yes := true
		res.Enabled = &yes
	}
	if f.patch != nil {
		res.ValuesPatch = f.patch(call, f.runs[call])
	}
	return res, nil
}

func (f *fakeRunner) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// fakeReleaser records Helm calls into the runner's call list.
type fakeReleaser struct {
	runner *fakeRunner
	owned  []string
	// unlabeled answers ClaimUnlabeled.
	unlabeled []string
	// status answers Status; a release not in it is not found.
	status map[string]helm.Status
}

func (f *fakeReleaser) record(call string) {
	f.runner.mu.Lock()
	defer f.runner.mu.Unlock()
	f.runner.calls = append(f.runner.calls, call)
}

func (f *fakeReleaser) Apply(_ context.Context, r helm.Release) (helm.Outcome, error) {
	f.record("helm:" + r.Name)
	// One object whose readiness is read, for tests with a Readiness.
	manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + r.Name + "\n"
	return helm.Outcome{Revision: 1, Manifest: manifest}, nil
}

func (f *fakeReleaser) Uninstall(_ context.Context, name string) (bool, error) {
	f.record("uninstall:" + name)
	return true, nil
}

func (f *fakeReleaser) Status(_ context.Context, name string) (helm.Status, error) {
	if st, ok := f.status[name]; ok {
		return st, nil
	}
	return helm.Status{}, helm.ErrNotFound
}

func (f *fakeReleaser) Owned(context.Context) ([]string, error) { return f.owned, nil }

func (f *fakeReleaser) ClaimUnlabeled(context.Context) ([]string, error) { return f.unlabeled, nil }

type fakeConfig struct{ writes []config.Edit }

// source builds f as the operator's configuration source.
func (f *fakeConfig) source(config.Checks) configwatch.Source { return f }

func (*fakeConfig) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// Events never sends: the tests hand the main queue its configurations.
func (*fakeConfig) Events() <-chan config.Event { return nil }

func (f *fakeConfig) Write(_ context.Context, e config.Edit) error {
	f.writes = append(f.writes, e)
	return nil
}

// writeTree creates files (executable when under hooks/) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if strings.Contains(name, "hooks/") || filepath.Base(name) == "enabled" {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// newTestOperator builds an operator over modules a (helm, order 10) and b
// (hooks only, order 20), both enabled, and a global hook.
func newTestOperator(t *testing.T, runner *fakeRunner, opts ...func(*options.Options)) (*Operator, *fakeReleaser) {
	t.Helper()
	return newTestOperatorWith(t, runner, nil, opts...)
}

// newTestOperatorWith is newTestOperator with deps changing the operator's
// dependencies (nil: none) before it is built.
func newTestOperatorWith(t *testing.T, runner *fakeRunner, deps func(*Deps), opts ...func(*options.Options)) (*Operator, *fakeReleaser) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"modules/values.yaml":             "aEnabled: true\nbEnabled: true\n",
		"modules/010-a/templates/cm.yaml": "kind: ConfigMap",
		"modules/010-a/hooks/mod":         "",
		"modules/020-b/hooks/mod":         "",
		"global-hooks/hooks/global":       "",
	})
	if runner.configs == nil {
		runner.configs = map[string]string{
			"mod":    "configVersion: v1\nonStartup: 1\nbeforeHelm: 1\nafterHelm: 1\nafterDeleteHelm: 1\n",
			"global": "configVersion: v1\nonStartup: 1\nbeforeAll: 1\nafterAll: 1\n",
		}
	}
	o := options.Default()
	o.Discovery.ModulesDirs, o.Discovery.GlobalHooksDir, o.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	o.Retry.Delay, o.Retry.MaxDelay = time.Millisecond, time.Millisecond
	for _, f := range opts {
		f(&o)
	}
	rel := &fakeReleaser{runner: runner}
	d := Deps{
		Hooks: runner, Releases: rel, Config: (&fakeConfig{}).source,
		Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	}
	if deps != nil {
		deps(&d)
	}
	op, err := New(o, d)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return op, rel
}

// runUntil starts the main queue with an empty ConfigMap applied and the
// startup task queued, and stops it once cond holds.
func runUntil(t *testing.T, o *Operator, cond func() bool) {
	t.Helper()
	runUntilWith(t, o, &config.Config{}, cond)
}

// requested lists modules with a run requested from the pool and not
// started yet.
func requested(o *Operator) []string {
	return o.pool.Waiting()
}

// runUntilWith is runUntil with the given ConfigMap content.
func runUntilWith(t *testing.T, o *Operator, cfg *config.Config, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	o.main.PushBack(applyConfigTask{config: cfg}, startupTask{})
	go func() { done <- o.main.Run(ctx, o.handle) }()
	go func() { done <- o.pool.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("condition not reached; queue: %+v", o.main.Snapshot())
		}
		<-time.After(time.Millisecond)
	}
	cancel()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("queue: %v", err)
		}
	}
}

func TestStartupConvergeOrder(t *testing.T) {
	runner := &fakeRunner{}
	o, _ := newTestOperator(t, runner)
	runUntil(t, o, o.Ready)
	want := []string{
		"global:onStartup",
		"global:beforeAll",
		"a:onStartup", "a:beforeHelm", "helm:a", "a:afterHelm",
		"b:onStartup", "b:beforeHelm", "b:afterHelm",
		"global:afterAll",
	}
	if diff := cmp.Diff(want, runner.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestDisabledModuleWithReleaseIsDeletedAndOrphanPurged(t *testing.T) {
	runner := &fakeRunner{}
	o, rel := newTestOperator(t, runner)
	rel.owned = []string{"b", "gone"}
	runUntilWith(t, o, &config.Config{Enabled: map[string]bool{"b": false}}, o.Ready)
	want := []string{
		"global:onStartup",
		"global:beforeAll",
		"b:afterDeleteHelm", // the fake Status finds no release: no beforeDeleteHelm, no uninstall
		"uninstall:gone",
		"a:onStartup", "a:beforeHelm", "helm:a", "a:afterHelm",
		"global:afterAll",
	}
	if diff := cmp.Diff(want, runner.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestAfterHelmChangingValuesEveryRunIsBounded(t *testing.T) {
	runner := &fakeRunner{patch: func(call string, n int) values.Patch {
		if call == "a:afterHelm" {
			return values.Patch{{Op: "add", Path: "/a/counter", Value: float64(n)}}
		}
		return nil
	}}
	o, _ := newTestOperator(t, runner, func(o *options.Options) {
		o.MaxValuesReruns = 3
		o.Retry.Delay, o.Retry.MaxDelay = time.Hour, time.Hour // no retry before the check
	})
	runUntil(t, o, func() bool { return o.state.get("a").LastError != "" })
	got := o.state.get("a").LastError
	want := "module a: afterHelm hooks [hooks/mod] changed values on 3 runs in a row; not running again until they settle"
	if got != want {
		t.Errorf("last error = %q, want %q", got, want)
	}
	runner.mu.Lock()
	n := runner.runs["a:afterHelm"]
	runner.mu.Unlock()
	if n != 4 {
		t.Errorf("afterHelm runs = %d, want 4 (the first and 3 reruns)", n)
	}
}

func TestAfterAllChangingGlobalValuesConvergesAgain(t *testing.T) {
	runner := &fakeRunner{patch: func(call string, n int) values.Patch {
		if call == "global:afterAll" && n == 1 {
			return values.Patch{{Op: "add", Path: "/global/discovered", Value: "yes"}}
		}
		return nil
	}}
	o, _ := newTestOperator(t, runner)
	runUntil(t, o, o.Ready)
	got := runner.recorded()
	var converges []string
	for _, c := range got {
		if strings.HasPrefix(c, "global:") {
			converges = append(converges, c)
		}
	}
	want := []string{"global:onStartup", "global:beforeAll", "global:afterAll", "global:beforeAll", "global:afterAll"}
	if diff := cmp.Diff(want, converges); diff != "" {
		t.Errorf("global hook runs (-want +got):\n%s", diff)
	}
	if v := o.store.GlobalValues()["discovered"]; v != "yes" {
		t.Errorf("global.discovered = %v, want the afterAll patch kept", v)
	}
}

func TestApplyConfigQueuesTheRightWork(t *testing.T) {
	base := &config.Config{
		Global:  values.Values{"x": 1.0},
		Modules: map[string]values.Values{"a": {"m": 1.0}},
		Enabled: map[string]bool{},
	}
	tests := []struct {
		name string
		next *config.Config
		want []string
	}{
		{"module section changed", &config.Config{Global: base.Global, Modules: map[string]values.Values{"a": {"m": 2.0}}}, []string{"run a"}},
		{"section of a disabled module changed", &config.Config{Global: base.Global, Modules: map[string]values.Values{"a": {"m": 1.0}, "b": {"z": 1.0}}}, nil},
		{"global changed", &config.Config{Global: values.Values{"x": 2.0}, Modules: base.Modules}, []string{"Converge"}},
		{"only an enabled flag of a module with a section", &config.Config{Global: base.Global, Modules: base.Modules, Enabled: map[string]bool{"a": true}}, []string{"Converge"}},
		{"nothing changed", base, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _ := newTestOperator(t, &fakeRunner{})
			o.converge.started = true
			o.state.update("a", func(s *moduleState) { s.Enabled = true })
			o.applyConfig(base)
			o.applyConfig(tt.next)
			items := o.main.Snapshot().Items
			got := make([]string, 0, len(items))
			for _, it := range items {
				got = append(got, it.Task.String())
			}
			for _, name := range requested(o) {
				got = append(got, "run "+name)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queued (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstConvergeNamesFailedModules(t *testing.T) {
	for name, tt := range map[string]struct {
		fail       func(call string) error
		wantLevel  string
		wantFailed []any
	}{
		"all ready": {wantLevel: "INFO"},
		"a fails": {
			fail: func(call string) error {
				if call == "a:beforeHelm" {
					return errors.New("exit status 1")
				}
				return nil
			},
			wantLevel: "WARN", wantFailed: []any{"a"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			op, _ := newTestOperator(t, &fakeRunner{fail: tt.fail})
			var buf syncBuffer
			op.log = slog.New(slog.NewJSONHandler(&buf, nil))
			runUntil(t, op, op.ready.Load)
			var line map[string]any
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, `"msg":"first converge done"`) {
					if err := json.Unmarshal([]byte(l), &line); err != nil {
						t.Fatal(err)
					}
				}
			}
			if line == nil {
				t.Fatalf("no first converge line in:\n%s", buf.String())
			}
			if line["level"] != tt.wantLevel || line["count"] != float64(2) {
				t.Errorf("level %v, enabled %v; want %s, 2", line["level"], line["count"], tt.wantLevel)
			}
			failed, _ := line["module"].([]any)
			if diff := cmp.Diff(tt.wantFailed, failed); diff != "" {
				t.Errorf("failed (-want +got):\n%s", diff)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
