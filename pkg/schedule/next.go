package schedule

import (
	"time"

	"github.com/robfig/cron/v3"
)

// NextRun returns the earliest instant after now at which one of crontabs
// is due, read as the Scheduler reads them; zero when there are none, or
// none is ever due again. A crontab that does not parse is left out: hook
// configs with one are rejected before they are scheduled.
func NextRun(crontabs []string, now time.Time) time.Time {
	parser := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	var next time.Time
	for _, c := range crontabs {
		sched, err := parser.Parse(c)
		if err != nil {
			continue
		}
		if t := sched.Next(now); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}
