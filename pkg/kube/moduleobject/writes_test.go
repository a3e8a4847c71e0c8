package moduleobject

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestWritesPerModuleRun counts the PATCH requests of module runs in the
// shapes the operator produces them, with N modules whose objects exist
// and show Ready: a converge (writes held, every module Pending at its
// plan, then runs by 4 workers, each run ending Ready with a new last-run
// time), and runs one after the other outside a converge (hook events).
// Nothing changes but the runs, so the fewest writes are one per run.
func TestWritesPerModuleRun(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		run      time.Duration
		converge bool
		// most status writes per module run
		max float64
	}{
		{"converge of 100, 140 ms runs", 100, 140 * time.Millisecond, true, 1},
		{"converge of 1000, 560 ms runs (140 s)", 1000, 560 * time.Millisecond, true, 2.1},
		{"100 runs of 300 ms in a row, not held", 100, 300 * time.Millisecond, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				per := simulateRuns(t, tt.n, tt.run, tt.converge)
				t.Logf("%d modules: %.2f status writes per module run", tt.n, per)
				if per > tt.max {
					t.Errorf("%.2f status writes per module run, want at most %.2f", per, tt.max)
				}
			})
		})
	}
}

// simulateRuns runs a Writer in a synctest bubble and returns the status
// writes per module of one round of runs after the objects were created.
func simulateRuns(t *testing.T, n int, run time.Duration, converge bool) float64 {
	t.Helper()
	log := &apiLog{}
	w := New(Options{Dynamic: fakeAPI(t, log), Namespace: "ns"})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("m%04d", i)
	}
	round := func() {
		if converge {
			for _, name := range names {
				w.Update(State{Name: name, Enabled: true, Phase: status.PhaseWaiting})
			}
			w.Hold(true)
		}
		workers := 1
		if converge {
			workers = 4
		}
		for i := 0; i < n; i += workers {
			batch := names[i:min(i+workers, n)]
			for _, name := range batch {
				w.Update(State{Name: name, Enabled: true, Phase: status.PhaseRunning})
			}
			<-time.After(run)
			for _, name := range batch {
				w.Update(State{Name: name, Enabled: true, Phase: status.PhaseReady, LastRun: time.Now(), LastRunDuration: run})
			}
		}
		w.Hold(false)
		<-time.After(time.Minute) // virtual time: every write is sent
		synctest.Wait()
	}
	w.Prune(names)
	round() // creates the objects
	log.take()
	round()
	statusWrites := 0
	for _, wr := range log.take() {
		if !strings.Contains(wr, "/status") {
			t.Errorf("write %q of a round after the objects were created", wr)
		}
		statusWrites++
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return float64(statusWrites) / float64(n)
}
