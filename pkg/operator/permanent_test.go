package operator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestV0ConfigIsTerminal(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "v0 config", err: hook.ErrConfigV0, want: true},
		{name: "wrapped and joined", err: errors.Join(errors.New("other"), &hook.ConfigError{Source: "x", Err: hook.ErrConfigV0}), want: true},
		{name: "plain", err: errors.New("timed out")},
		{name: "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := queue.IsTerminal(tt.err); got != tt.want {
				t.Errorf("IsTerminal(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}

func TestV0HookConfigStopsOnlyItsModule(t *testing.T) {
	runner := &fakeRunner{configOf: func(path string) (string, bool) {
		if strings.Contains(path, "010-a") {
			return "configVersion: v0\nonStartup: 1\n", true
		}
		return "", false
	}}
	o, _ := newTestOperator(t, runner)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = o.main.Run(ctx, o.handle) })
	wg.Go(func() { _ = o.pool.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	o.main.PushBack(applyConfigTask{config: &config.Config{}}, startupTask{})
	waitFor(t, "the first converge", o.Ready)
	// A change of global values converges again: every enabled module is
	// asked to run.
	o.main.PushBack(applyConfigTask{config: &config.Config{Global: values.Values{"g": 1.0}}})
	waitFor(t, "the second converge", func() bool { return runs(runner, "global:afterAll") == 2 })

	if got := runs(runner, "b:beforeHelm"); got != 2 {
		t.Errorf("b:beforeHelm runs = %d, want 2", got)
	}
	calls := runner.recorded()
	if i := slices.IndexFunc(calls, func(c string) bool { return strings.HasPrefix(c, "a:") || c == "helm:a" }); i >= 0 {
		t.Errorf("module a ran (%s), want none of its hooks nor its release; calls: %v", calls[i], calls)
	}
	runner.mu.Lock()
	for path, n := range runner.configRuns {
		if strings.Contains(path, "010-a") && n != 1 {
			t.Errorf("config of %s read %d times, want once", path, n)
		}
	}
	runner.mu.Unlock()
	i := slices.IndexFunc(o.Modules(), func(m status.ModuleStatus) bool { return m.Name == "a" })
	a := o.Modules()[i]
	if a.Phase != status.PhaseFailed || !strings.Contains(a.LastError, "hooks/mod: configVersion v0 is not supported: convert it to v1") {
		t.Errorf("module a = %+v, want phase %s and the v0 error", a, status.PhaseFailed)
	}
	if o.pool.BackingOff("a") {
		t.Error("module a backs off, want no retry")
	}
}
