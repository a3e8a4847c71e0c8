package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// pausingClock is a fake clock whose second NewTimer is preceded by the
// clock moving on by pause: the scheduler read the time, then was paused
// before it armed its timer. (The first timer is the one Run arms before
// it sees the wakeup of the Add that came before it started.)
type pausingClock struct {
	*clocktesting.FakeClock
	pause time.Duration
	mu    sync.Mutex
	calls int
}

func (c *pausingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.calls++
	if c.calls == 2 {
		c.Step(c.pause)
	}
	c.mu.Unlock()
	return c.FakeClock.NewTimer(d)
}

// TestTimeMovesOnBeforeTheTimerIsArmed: an entry whose instant passes
// between the scheduler reading the clock and arming its timer fires
// then, not a whole interval late.
func TestTimeMovesOnBeforeTheTimerIsArmed(t *testing.T) {
	clk := &pausingClock{FakeClock: clocktesting.NewFakeClock(start0()), pause: time.Second}
	ticks := make(chan Tick, 1)
	s := New(clk, ticks)
	if err := s.Add("a", "* * * * * *"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	}()
	select {
	case tick := <-ticks:
		if want := (Tick{"a", at(time.Second)}); tick != want {
			t.Errorf("tick %v, want %v", tick, want)
		}
	case <-time.After(patience):
		t.Fatal("no tick: the timer was armed for an instant the clock had passed")
	}
}
