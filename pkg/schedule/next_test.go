package schedule

import (
	"testing"
	"time"
)

func TestNextRun(t *testing.T) {
	now := time.Date(2026, 3, 14, 10, 7, 30, 0, time.UTC)
	tests := []struct {
		name     string
		crontabs []string
		want     time.Time
	}{
		{name: "none", want: time.Time{}},
		{name: "every minute", crontabs: []string{"* * * * *"}, want: time.Date(2026, 3, 14, 10, 8, 0, 0, time.UTC)},
		{name: "seconds field", crontabs: []string{"*/20 * * * * *"}, want: time.Date(2026, 3, 14, 10, 7, 40, 0, time.UTC)},
		{name: "descriptor", crontabs: []string{"@every 10s"}, want: now.Add(10 * time.Second)},
		{name: "earliest of several", crontabs: []string{"0 12 * * *", "*/15 * * * *", "@daily"}, want: time.Date(2026, 3, 14, 10, 15, 0, 0, time.UTC)},
		{name: "due exactly now is the next one", crontabs: []string{"30 7 10 * * *"}, want: time.Date(2026, 3, 15, 10, 7, 30, 0, time.UTC)},
		{name: "time zone", crontabs: []string{"CRON_TZ=Asia/Tokyo 0 20 * * *"}, want: time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)},
		{name: "invalid left out", crontabs: []string{"not a crontab", "0 11 * * *"}, want: time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)},
		{name: "never due", crontabs: []string{"0 0 30 2 *"}, want: time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextRun(tt.crontabs, now); !got.Equal(tt.want) {
				t.Errorf("NextRun(%q, %s) = %s, want %s", tt.crontabs, now, got, tt.want)
			}
		})
	}
}
