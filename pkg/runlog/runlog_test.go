package runlog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// at is s seconds into the tests' clock.
func at(s int) time.Time {
	return time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC).Add(time.Duration(s) * time.Second)
}

// stepCase plays a module's runs through a log, tick moving its clock a
// second on, and lists the runs it must keep.
type stepCase struct {
	name string
	play func(l *Log, tick func())
	want []status.Run
}

// runSteps runs the cases, each on a log of its own.
func runSteps(t *testing.T, tests []stepCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(at(0))
			l := New(clk, 0)
			tt.play(l, func() { clk.SetTime(clk.Now().Add(time.Second)) })
			if diff := cmp.Diff(tt.want, l.Runs("m")); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepsOfARun checks the spans of a run held for its requirements.
func TestStepsOfARun(t *testing.T) {
	runSteps(t, []stepCase{
		{
			name: "held, then hooks, helm, readiness, afterHelm",
			play: func(l *Log, tick func()) {
				l.Held("m")
				tick()
				l.Begin("m")
				tick()
				l.Step("m", status.StepHelm)
				tick()
				l.Step("m", status.StepReadiness)
				tick()
				l.Step("m", status.StepHooks)
				tick()
				l.End("m", nil)
			},
			want: []status.Run{{Start: at(0), End: at(5), Outcome: status.OutcomeSucceeded, Spans: []status.Span{
				{Step: status.StepRequirements, Start: at(0), End: at(1)},
				{Step: status.StepHooks, Start: at(1), End: at(2)},
				{Step: status.StepHelm, Start: at(2), End: at(3)},
				{Step: status.StepReadiness, Start: at(3), End: at(4)},
				{Step: status.StepHooks, Start: at(4), End: at(5)},
			}}},
		},
	})
}

// TestStepsAcrossRuns checks what a failure, a terminal failure and a
// disabled module leave for the next run.
func TestStepsAcrossRuns(t *testing.T) {
	errHelm := errors.New("upgrade release: timed out")
	runSteps(t, []stepCase{
		{
			name: "a failure is followed by a run that starts with its backoff",
			play: func(l *Log, tick func()) {
				l.Begin("m")
				tick()
				l.End("m", errHelm)
				tick()
				tick()
				l.Begin("m")
				tick()
				l.End("m", nil)
			},
			want: []status.Run{
				{Start: at(0), End: at(1), Outcome: status.OutcomeFailed, Error: errHelm.Error(), Spans: []status.Span{
					{Step: status.StepHooks, Start: at(0), End: at(1)},
				}},
				{Start: at(1), End: at(4), Outcome: status.OutcomeSucceeded, Spans: []status.Span{
					{Step: status.StepBackoff, Start: at(1), End: at(3)},
					{Step: status.StepHooks, Start: at(3), End: at(4)},
				}},
			},
		},
		{
			name: "a terminal failure has no backoff after it",
			play: func(l *Log, tick func()) {
				l.Begin("m")
				l.End("m", queue.TerminalError(errHelm))
				tick()
				l.Begin("m")
			},
			want: []status.Run{
				{Start: at(0), End: at(0), Outcome: status.OutcomeFailed, Error: errHelm.Error(), Spans: []status.Span{
					{Step: status.StepHooks, Start: at(0), End: at(0)},
				}},
				{Start: at(1), Outcome: status.OutcomeRunning, Spans: []status.Span{{Step: status.StepHooks, Start: at(1)}}},
			},
		},
		{
			name: "a step without a run is not recorded",
			play: func(l *Log, _ func()) { l.Step("m", status.StepHelm) },
			want: nil,
		},
		{
			name: "forget drops the run in progress and the backoff",
			play: func(l *Log, tick func()) {
				l.Begin("m")
				l.End("m", errHelm)
				tick()
				l.Held("m")
				l.Forget("m")
				tick()
				l.Begin("m")
			},
			want: []status.Run{
				{Start: at(0), End: at(0), Outcome: status.OutcomeFailed, Error: errHelm.Error(), Spans: []status.Span{
					{Step: status.StepHooks, Start: at(0), End: at(0)},
				}},
				{Start: at(2), Outcome: status.OutcomeRunning, Spans: []status.Span{{Step: status.StepHooks, Start: at(2)}}},
			},
		},
	})
}

// TestBounds checks that the log keeps at most its number of runs, of
// spans per run and of bytes per error, however long a module runs.
func TestBounds(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(at(0))
	l := New(clk, 3)
	for i := range 10 {
		l.Begin("m")
		for range 100 {
			l.Held("m")
			l.Begin("m")
		}
		clk.SetTime(at(i + 1))
		l.End("m", queue.TerminalError(errors.New(strings.Repeat("x", 10*maxError))))
	}
	runs := l.Runs("m")
	if len(runs) != 3 {
		t.Fatalf("kept %d runs, want 3", len(runs))
	}
	if !runs[0].End.Equal(at(8)) {
		t.Errorf("oldest run kept ended at %s, want the eighth (%s)", runs[0].End, at(8))
	}
	for _, r := range runs {
		if len(r.Spans) > maxSpans {
			t.Errorf("a run kept %d spans, want at most %d", len(r.Spans), maxSpans)
		}
		if last := r.Spans[len(r.Spans)-1]; last.End.IsZero() {
			t.Errorf("a finished run's last span is open: %+v", last)
		}
		if len(r.Error) > maxError+len("...") {
			t.Errorf("a run kept an error of %d bytes, want at most %d", len(r.Error), maxError+3)
		}
	}
}

// TestSnapshotsAreCopies checks that what Runs returns does not change
// with later calls, and that All lists modules by name.
func TestSnapshotsAreCopies(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(at(0))
	l := New(clk, 0)
	l.Begin("b")
	l.Begin("a")
	got := l.Runs("b")
	clk.SetTime(at(1))
	l.Step("b", status.StepHelm)
	if len(got[0].Spans) != 1 || !got[0].Spans[0].End.IsZero() {
		t.Errorf("a snapshot changed after it was taken: %+v", got)
	}
	all := l.All()
	names := make([]string, 0, len(all))
	for _, m := range all {
		names = append(names, m.Module)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" {
		t.Errorf("All's modules (-want +got):\n%s", diff)
	}
	var none *Log
	none.Begin("a")
	none.End("a", nil)
	if none.Runs("a") != nil || none.All() != nil {
		t.Error("a nil Log returned runs")
	}
}
