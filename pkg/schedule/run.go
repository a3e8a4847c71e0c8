package schedule

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/utils/clock"
)

// Run sends ticks until ctx is done, then returns nil. It waits on a clock
// timer for the earliest entry; Add and Remove wake it to wait again. Only
// one Run may run at a time; a second one returns an error at once.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("scheduler is already running")
	}
	defer s.running.Store(false)
	for ctx.Err() == nil {
		next, ok := s.nextDue()
		if ok && !next.After(s.clock.Now()) {
			s.fire(ctx)
			continue
		}
		var (
			timer clock.Timer
			due   <-chan time.Time // nil, so never ready, without entries
		)
		if ok {
			timer = s.clock.NewTimer(next.Sub(s.clock.Now()))
			due = timer.C()
			// The clock may have passed next between reading it and
			// arming the timer, which would then fire late: fire now.
			if !next.After(s.clock.Now()) {
				timer.Stop()
				s.fire(ctx)
				continue
			}
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
	return nil
}

// nextDue returns when the earliest entry is due, and false when no entry
// will ever be.
func (s *Scheduler) nextDue() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, e := range s.entries {
		if !e.next.IsZero() && (next.IsZero() || e.next.Before(next)) {
			next = e.next
		}
	}
	return next, !next.IsZero()
}

// dueTick is a tick to send and the entry it is for.
type dueTick struct {
	Tick
	entry *entry
}

// fire sends a tick for every entry due by now, in order of time then ID,
// after moving each to its next instant after now, so instants missed
// while the receiver was slow are skipped. It stops early when ctx is done.
func (s *Scheduler) fire(ctx context.Context) {
	now := s.clock.Now()
	var due []dueTick
	s.mu.Lock()
	for id, e := range s.entries {
		if !e.next.IsZero() && !e.next.After(now) {
			due = append(due, dueTick{Tick{ID: id, Time: e.next}, e})
			e.next = e.schedule.Next(now)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(due, func(a, b dueTick) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID))
	})
	for _, d := range due {
		if !s.current(d.ID, d.entry) {
			continue // removed or replaced while an earlier tick was sent
		}
		select {
		case s.ticks <- d.Tick:
		case <-ctx.Done():
			return
		}
	}
}

// current reports whether e is still the entry of id.
func (s *Scheduler) current(id string, e *entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[id] == e
}
