package operator

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// slowConfigRunner is fakeRunner whose --config run of module hung's hook
// fails at startup and then, at the module's first run, blocks until
// release is closed, as a hung hook's process does.
type slowConfigRunner struct {
	*fakeRunner
	mu      sync.Mutex
	calls   int
	started chan struct{} // closed when the blocked call starts
	release chan struct{}
}

func (s *slowConfigRunner) Config(ctx context.Context, path string) ([]byte, error) {
	if strings.Contains(path, "010-hung") {
		s.mu.Lock()
		s.calls++
		n := s.calls
		s.mu.Unlock()
		switch n {
		case 1:
			return nil, errors.New("exit status 1")
		case 2:
			close(s.started)
			select {
			case <-s.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return s.fakeRunner.Config(ctx, path)
}

// A module whose hooks load at its first run (their load at startup
// failed) prints their configuration without holding a worker: with
// --module-workers=1 the other modules are Ready while its --config
// process runs; once it ends, the module runs to Ready.
func TestHungConfigLoadHoldsNoWorker(t *testing.T) {
	const n = 3
	dir, others := hungTree(t, n, nil)
	fake := &fakeRunner{configs: map[string]string{
		"hung":   "configVersion: v1\nbeforeHelm: 1\n",
		"mod":    "configVersion: v1\nbeforeHelm: 1\n",
		"global": "configVersion: v1\nafterAll: 1\n",
	}}
	runner := &slowConfigRunner{fakeRunner: fake, started: make(chan struct{}), release: make(chan struct{})}
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Discovery.GlobalHooksDir, opts.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	opts.Retry.Delay, opts.Retry.MaxDelay = time.Millisecond, time.Millisecond
	opts.ModuleWorkers = 1
	o, err := New(opts, Deps{
		Hooks: runner, Releases: &fakeReleaser{runner: fake}, Config: (&fakeConfig{}).source,
		Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ready := func(name string) bool { return o.state.get(name).Phase == status.PhaseReady }
	released := false
	runUntil(t, o, func() bool {
		if !released {
			if slices.ContainsFunc(others, func(m string) bool { return !ready(m) }) {
				return false
			}
			select {
			case <-runner.started:
			default:
				t.Fatal("the others are Ready, but hung's hooks never loaded again")
			}
			if slices.Contains(fake.recorded(), "hung:beforeHelm") {
				t.Fatal("hung ran its hooks before they loaded")
			}
			close(runner.release)
			released = true
			return false
		}
		return ready("hung") && o.Ready()
	})
}
