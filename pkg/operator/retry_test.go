package operator

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestFailingModuleRunsAtOnceWhenItsInputsChange(t *testing.T) {
	base := &config.Config{Global: values.Values{"g": 1.0}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}}
	tests := []struct {
		name   string
		change *config.Config
		// wantRun is the call that shows the change was handled; a's
		// beforeHelm must have run again by then exactly when wantA.
		wantRun string
		wantA   bool
	}{
		{
			name:    "its section",
			change:  &config.Config{Global: base.Global, Modules: map[string]values.Values{"a": {"x": 1.0}}, Enabled: map[string]bool{}},
			wantRun: "a:beforeHelm", wantA: true,
		},
		{
			name:    "global values, through a converge",
			change:  &config.Config{Global: values.Values{"g": 2.0}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}},
			wantRun: "a:beforeHelm", wantA: true,
		},
		{
			name:    "another module's section",
			change:  &config.Config{Global: base.Global, Modules: map[string]values.Values{"b": {"x": 1.0}}, Enabled: map[string]bool{}},
			wantRun: "b:beforeHelm",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runner := &fakeRunner{fail: func(call string) error {
				if call == "a:beforeHelm" {
					return errors.New("broken until its inputs change")
				}
				return nil
			}}
			o, _ := newTestOperator(t, runner, func(o *options.Options) { o.Retry.Delay, o.Retry.MaxDelay = time.Hour, time.Hour })
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _ = o.main.Run(ctx, o.handle) })
			wg.Go(func() { _ = o.pool.Run(ctx) })
			defer func() { cancel(); wg.Wait() }()
			o.main.PushBack(applyConfigTask{config: base}, startupTask{})
			waitFor(t, "the first converge", o.Ready)
			waitFor(t, "a to back off", func() bool { return o.pool.BackingOff("a") })
			before := runs(runner, tt.wantRun)
			o.main.PushBack(applyConfigTask{config: tt.change})
			waitFor(t, tt.wantRun+" to run again", func() bool { return runs(runner, tt.wantRun) > before })
			want := 1 // the first attempt only: its backoff is an hour
			if tt.wantA {
				want = 2
			}
			if got := runs(runner, "a:beforeHelm"); got != want {
				t.Errorf("a:beforeHelm runs = %d, want %d", got, want)
			}
		})
	}
}

func runs(f *fakeRunner, call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[call]
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
		<-time.After(time.Millisecond)
	}
}
