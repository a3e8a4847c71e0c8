package server

import (
	"fmt"
	"time"
)

// relative says when t is as seen from now, in words a reader takes in at
// a glance: "in 4m10s", "3m ago", "in 2h5m", "in 3d4h". Seconds are shown
// within the hour, minutes within two days, hours beyond; the absolute
// time goes beside it (a title), since a refreshing page only keeps it
// roughly true.
func relative(now, t time.Time) string {
	d := t.Sub(now)
	future := d > 0
	if !future {
		d = -d
	}
	var s string
	switch {
	case d < time.Second:
		return "now"
	case d < time.Hour:
		s = d.Round(time.Second).String()
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		s = fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		d = d.Round(time.Hour)
		s = fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// rfc3339 is t in UTC as a machine reads it (a time element's datetime).
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// instant is a time to show with the page's now: the module page's
// "when" template renders it as a time element, relative, with the
// absolute time in its title.
type instant struct{ Now, At time.Time }

func when(now, at time.Time) instant { return instant{Now: now, At: at} }
