// Package schedule turns cron bindings into tick events on an injected clock.
package schedule

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/utils/clock"
)

// Tick says that the entry ID is due.
type Tick struct {
	ID string
	// Time is the instant cron scheduled, not when the tick was sent.
	Time time.Time
}

// Scheduler sends a Tick on its channel each time an entry's crontab is
// due. Crontabs are those hook configs accept: 5 fields (minute
// resolution), 6 fields with seconds first, or descriptors such as
// "@every 10s" or "@daily"; they are read in the location of the clock's
// Now unless they start with CRON_TZ=.
//
// Ticks are sent one at a time, blocking until received, and never pile
// up: when the receiver is slow, every entry that fell due meanwhile gets
// one late tick carrying its first missed instant, and its later missed
// instants are skipped (coalesced). Entries due at the same instant tick in
// ID order. Times come from the crontab, not from the previous tick, so a
// slow receiver does not make entries drift.
//
// The Scheduler owns its entries; Add and Remove are safe to call from any
// goroutine, before or while Run runs.
type Scheduler struct {
	clock   clock.Clock
	ticks   chan<- Tick
	parser  cron.Parser
	wake    chan struct{} // tells Run the entries changed; buffered 1
	running atomic.Bool

	mu      sync.Mutex
	entries map[string]*entry
}

// entry is one crontab and the next instant it is due.
type entry struct {
	schedule cron.Schedule
	next     time.Time // zero: the crontab never fires again
}

// New returns a Scheduler without entries that reads time from clk and
// sends ticks on ticks. Ticks are only sent while Run runs.
func New(clk clock.Clock, ticks chan<- Tick) *Scheduler {
	return &Scheduler{
		clock: clk,
		ticks: ticks,
		// The options of hook.CronParser, which validates hook configs.
		parser:  cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor),
		wake:    make(chan struct{}, 1),
		entries: map[string]*entry{},
	}
}

// Add schedules id on crontab, first due at the crontab's next instant
// after now. It replaces an entry with the same id, dropping a tick of the
// old entry not yet sent.
func (s *Scheduler) Add(id, crontab string) error {
	sched, err := s.parser.Parse(crontab)
	if err != nil {
		return fmt.Errorf("parse crontab %q: %w", crontab, err)
	}
	e := &entry{schedule: sched, next: sched.Next(s.clock.Now())}
	s.mu.Lock()
	s.entries[id] = e
	s.mu.Unlock()
	s.poke()
	return nil
}

// Remove unschedules id; removing an unknown id does nothing. After Remove
// returns, no tick for id is sent, except one Run was already blocked
// sending.
func (s *Scheduler) Remove(id string) {
	s.mu.Lock()
	delete(s.entries, id)
	s.mu.Unlock()
	s.poke()
}

// poke wakes Run to recompute its timer, without blocking.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
