package operator

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// blockingRunner is fakeRunner whose run of one hook call (module:binding)
// blocks until release is closed, as a hung hook's process does.
type blockingRunner struct {
	*fakeRunner
	block   string
	once    sync.Once
	started chan struct{} // closed when the blocked call starts
	release chan struct{}
}

func (b *blockingRunner) Run(ctx context.Context, r hook.Run) (*hook.Result, error) {
	if r.Module+":"+r.Binding == b.block {
		b.once.Do(func() { close(b.started) })
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.fakeRunner.Run(ctx, r)
}

// A module whose beforeHelm hook's process does not end holds no worker:
// with --module-workers=1 the other modules (which require nothing of it)
// run their hooks and Helm and are Ready while it runs; once it ends, the
// module's run goes on from its hook's result to Ready.
func TestHungHookHoldsNoWorker(t *testing.T) {
	const n = 4
	dir, others := hungTree(t, n, map[string]string{"templates/cm.yaml": "kind: ConfigMap"})
	runner := &blockingRunner{
		fakeRunner: &fakeRunner{configs: map[string]string{
			"hung":   "configVersion: v1\nbeforeHelm: 1\n",
			"mod":    "configVersion: v1\nonStartup: 1\nbeforeHelm: 1\nafterHelm: 1\n",
			"global": "configVersion: v1\nbeforeAll: 1\nafterAll: 1\n",
		}},
		block: "hung:beforeHelm", started: make(chan struct{}), release: make(chan struct{}),
	}
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Discovery.GlobalHooksDir, opts.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	opts.Retry.Delay, opts.Retry.MaxDelay = time.Millisecond, time.Millisecond
	opts.ModuleWorkers = 1
	o, err := New(opts, Deps{
		Hooks: runner, Releases: &fakeReleaser{runner: runner.fakeRunner}, Config: (&fakeConfig{}).source,
		Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ready := func(name string) bool { return o.state.get(name).Phase == status.PhaseReady }
	released := false
	runUntil(t, o, func() bool {
		if !released {
			if !slices.ContainsFunc(others, func(m string) bool { return !ready(m) }) {
				select {
				case <-runner.started:
				default:
					t.Fatal("the others are Ready, but hung's beforeHelm hook never started")
				}
				if ready("hung") || slices.Contains(runner.recorded(), "hung:beforeHelm") {
					t.Fatal("hung's run went on before its hook ended")
				}
				close(runner.release)
				released = true
			}
			return false
		}
		return ready("hung") && o.Ready()
	})
	calls := runner.recorded()
	i := slices.Index(calls, "hung:beforeHelm")
	for _, m := range others {
		if j := slices.Index(calls, m+":afterHelm"); j < 0 || j > i {
			t.Errorf("%s:afterHelm at %d, want before hung's hook ended (%d): %v", m, j, i, calls)
		}
	}
	if j := slices.Index(calls, "helm:hung"); j < i {
		t.Errorf("hung's release applied at %d, before its beforeHelm hook ended (%d): %v", j, i, calls)
	}
}

// hungTree writes a module tree with module hung (a chart and a hook
// named hung, order 10), n modules other0..other<n-1> (weight 20, a hook
// named mod, and extra's files each), all enabled, and a global hook. It
// returns the tree's directory and the other modules' names.
func hungTree(t *testing.T, n int, extra map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"modules/010-hung/templates/cm.yaml": "kind: ConfigMap",
		"modules/010-hung/hooks/hung":        "",
		"global-hooks/hooks/global":          "",
	}
	enabled := "hungEnabled: true\n"
	others := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("other%d", i)
		others = append(others, name)
		mod := fmt.Sprintf("modules/020-%s/", name)
		files[mod+"module.yaml"] = "weight: 20\n"
		files[mod+"hooks/mod"] = ""
		for f, content := range extra {
			files[mod+f] = content
		}
		enabled += name + "Enabled: true\n"
	}
	files["modules/values.yaml"] = enabled
	writeTree(t, dir, files)
	return dir, others
}
