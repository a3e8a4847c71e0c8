package schedule

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// patience bounds every wait for the scheduler's goroutine, in real time.
const patience = 10 * time.Second

// start0 is when every test's fake clock starts: a Thursday at midnight.
func start0() time.Time { return time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC) }

// harness runs a Scheduler on a fake clock until the test ends.
type harness struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	ticks chan Tick
	s     *Scheduler
}

// run starts Run on a fake clock at now, sending on a channel with the
// given buffer; the test's cleanup cancels Run and checks it returned nil.
func run(t *testing.T, now time.Time, buffer int) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktesting.NewFakeClock(now), ticks: make(chan Tick, buffer)}
	h.s = New(h.clock, h.ticks)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- h.s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		case <-time.After(patience):
			t.Error("Run did not return after cancel")
		}
	})
	return h
}

func (h *harness) add(id, crontab string) {
	h.t.Helper()
	if err := h.s.Add(id, crontab); err != nil {
		h.t.Fatalf("Add(%q, %q): %v", id, crontab, err)
	}
}

// idle waits until Run waits on a timer, so it has sent every due tick.
func (h *harness) idle() {
	h.t.Helper()
	deadline := time.After(patience)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for !h.clock.HasWaiters() {
		select {
		case <-poll.C:
		case <-deadline:
			h.t.Fatal("the scheduler never waited on a timer")
		}
	}
}

// step waits for Run to be idle, then moves the clock by d.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	h.idle()
	h.clock.Step(d)
}

// expect receives len(want) ticks and compares them with want.
func (h *harness) expect(want ...Tick) {
	h.t.Helper()
	var got []Tick
	for range want {
		select {
		case tick := <-h.ticks:
			got = append(got, tick)
		case <-time.After(patience):
			h.t.Fatalf("got ticks %v, then none; want %v", got, want)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		h.t.Errorf("ticks mismatch (-want +got):\n%s", diff)
	}
}

// expectNone checks, once Run is idle, that no tick is waiting.
func (h *harness) expectNone() {
	h.t.Helper()
	h.idle()
	select {
	case tick := <-h.ticks:
		h.t.Errorf("unexpected tick %v", tick)
	default:
	}
}

// waitNext waits until entry id is next due at want.
func (h *harness) waitNext(id string, want time.Time) {
	h.t.Helper()
	deadline := time.After(patience)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		h.s.mu.Lock()
		next := h.s.entries[id].next
		h.s.mu.Unlock()
		if next.Equal(want) {
			return
		}
		select {
		case <-poll.C:
		case <-deadline:
			h.t.Fatalf("entry %q is next due at %v, want %v", id, next, want)
		}
	}
}

// at is start0 plus d.
func at(d time.Duration) time.Time { return start0().Add(d) }

func TestSchedules(t *testing.T) {
	type step struct {
		by   time.Duration
		want []time.Time // ticks of entry "e" after the step
	}
	tests := []struct {
		name    string
		start   time.Duration // after start0
		crontab string
		steps   []step
	}{
		{
			name:    "6 fields, every second",
			crontab: "* * * * * *",
			steps: []step{
				{time.Second, []time.Time{at(time.Second)}},
				{time.Second, []time.Time{at(2 * time.Second)}},
				{time.Second, []time.Time{at(3 * time.Second)}},
				{time.Second, []time.Time{at(4 * time.Second)}},
			},
		},
		{
			name:    "5 fields, every minute",
			start:   30 * time.Second,
			crontab: "* * * * *",
			steps: []step{
				{29 * time.Second, nil},
				{time.Second, []time.Time{at(time.Minute)}},
				{59 * time.Second, nil},
				{time.Second, []time.Time{at(2 * time.Minute)}},
			},
		},
		{
			name:    "6 fields, every 10 seconds",
			start:   3 * time.Second,
			crontab: "*/10 * * * * *",
			steps: []step{
				{6 * time.Second, nil},
				{time.Second, []time.Time{at(10 * time.Second)}},
				{10 * time.Second, []time.Time{at(20 * time.Second)}},
			},
		},
		{
			name:    "5 fields, minute 30 of every hour",
			crontab: "30 * * * *",
			steps: []step{
				{30 * time.Minute, []time.Time{at(30 * time.Minute)}},
				{time.Hour, []time.Time{at(90 * time.Minute)}},
			},
		},
		{
			name:    "descriptor",
			crontab: "@every 90s",
			steps: []step{
				{90 * time.Second, []time.Time{at(90 * time.Second)}},
				{90 * time.Second, []time.Time{at(3 * time.Minute)}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := run(t, at(tt.start), 10)
			h.add("e", tt.crontab)
			for _, st := range tt.steps {
				h.step(st.by)
				for _, want := range st.want {
					h.expect(Tick{ID: "e", Time: want})
				}
				h.expectNone()
			}
		})
	}
}

func TestSameInstantInIDOrder(t *testing.T) {
	h := run(t, start0(), 10)
	for _, id := range []string{"c", "a", "z", "b"} {
		crontab := "* * * * *"
		if id == "z" {
			crontab = "*/2 * * * *"
		}
		h.add(id, crontab)
	}
	h.step(time.Minute)
	m1 := at(time.Minute)
	h.expect(Tick{"a", m1}, Tick{"b", m1}, Tick{"c", m1})
	h.expectNone()
	h.step(time.Minute)
	m2 := at(2 * time.Minute)
	h.expect(Tick{"a", m2}, Tick{"b", m2}, Tick{"c", m2}, Tick{"z", m2})
	h.expectNone()
}

func TestAddRemoveWhileRunning(t *testing.T) {
	h := run(t, start0(), 10)
	h.add("a", "* * * * * *")
	h.step(time.Second)
	h.expect(Tick{"a", at(time.Second)})

	h.add("b", "* * * * * *")
	h.step(time.Second)
	h.expect(Tick{"a", at(2 * time.Second)}, Tick{"b", at(2 * time.Second)})

	h.s.Remove("a")
	h.s.Remove("unknown")
	h.step(time.Second)
	h.expect(Tick{"b", at(3 * time.Second)})
	h.expectNone()

	// Adding an existing id replaces its crontab.
	h.add("b", "*/10 * * * * *")
	h.step(time.Second)
	h.expectNone()
	h.step(6 * time.Second)
	h.expect(Tick{"b", at(10 * time.Second)})

	// With no entries left nothing fires; a new entry starts from now.
	h.s.Remove("b")
	h.clock.Step(time.Minute)
	h.add("a", "* * * * * *")
	h.step(time.Second)
	h.expect(Tick{"a", at(71 * time.Second)})
	h.expectNone()
}

func TestNeverDueCrontab(t *testing.T) {
	h := run(t, start0(), 10)
	h.add("february-30", "0 0 30 2 *")
	h.add("s", "* * * * * *")
	h.step(time.Second)
	h.expect(Tick{"s", at(time.Second)})
	h.expectNone()
}

// TestSlowReceiver checks that instants missed while nobody receives are
// coalesced into one late tick per entry, and that later ticks keep to the
// crontab.
func TestSlowReceiver(t *testing.T) {
	h := run(t, start0(), 0)
	h.add("a", "* * * * * *")
	h.add("b", "*/2 * * * * *")
	h.step(time.Second)
	// Once a has moved on, Run is blocked sending a@1s; nobody receives
	// for 5 seconds.
	h.waitNext("a", at(2*time.Second))
	h.clock.Step(5 * time.Second)
	h.expect(
		Tick{"a", at(time.Second)},
		// Sent late, with their first missed instant; the rest is skipped.
		Tick{"a", at(2 * time.Second)},
		Tick{"b", at(2 * time.Second)},
	)
	h.expectNone()
	h.step(time.Second)
	h.expect(Tick{"a", at(7 * time.Second)})
	h.step(time.Second)
	h.expect(Tick{"a", at(8 * time.Second)}, Tick{"b", at(8 * time.Second)})
}

func TestRunStopsOnCancel(t *testing.T) {
	tests := []struct {
		name    string
		crontab string // "" for no entries
		steps   int    // seconds stepped before cancel
	}{
		{name: "no entries"},
		{name: "waiting on a timer", crontab: "* * * * *"},
		{name: "blocked sending", crontab: "* * * * * *", steps: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(start0())
			s := New(clk, make(chan Tick)) // nobody receives
			if tt.crontab != "" {
				if err := s.Add("e", tt.crontab); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			h := &harness{t: t, clock: clk}
			for range tt.steps {
				h.step(time.Second)
			}
			if tt.crontab != "" && tt.steps == 0 {
				h.idle()
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(patience):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
}

func TestRunTwice(t *testing.T) {
	h := run(t, start0(), 1)
	h.add("e", "* * * * *")
	h.idle()
	err := h.s.Run(t.Context())
	if err == nil || err.Error() != "scheduler is already running" {
		t.Errorf("second Run = %v, want an error", err)
	}
}

func TestAddInvalidCrontab(t *testing.T) {
	tests := []struct {
		name    string
		crontab string
		wantErr string
	}{
		{name: "empty", crontab: "", wantErr: `parse crontab "": empty spec string`},
		{name: "4 fields", crontab: "* * * *", wantErr: `parse crontab "* * * *": expected 5 to 6 fields, found 4`},
		{name: "7 fields", crontab: "* * * * * * *", wantErr: `parse crontab "* * * * * * *": expected 5 to 6 fields, found 7`},
		{name: "minute out of range", crontab: "61 * * * *", wantErr: `parse crontab "61 * * * *": `},
		{name: "unknown descriptor", crontab: "@fortnightly", wantErr: `parse crontab "@fortnightly": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(clocktesting.NewFakeClock(start0()), make(chan Tick))
			err := s.Add("e", tt.crontab)
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("Add = %v, want an error starting with %q", err, tt.wantErr)
			}
			if _, ok := s.nextDue(); ok {
				t.Error("the invalid crontab was scheduled")
			}
		})
	}
}
