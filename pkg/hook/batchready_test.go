package hook

import (
	"testing"
)

func TestReadinessProbeRunsOnItsOwnQueue(t *testing.T) {
	t.Parallel()
	data := `{"version":"v1","hooks":[{"configVersion":"v1","schedule":[{"name":"tick","crontab":"* * * * *"}]}],` +
		`"readiness":{"configVersion":"v1","metadata":{"name":"readiness"},"schedule":[{"name":"m-moduleReadinessSchedule","crontab":"*/5 * * * * *"}]}}`
	hooks, err := ParseBatchConfig("/modules/020-m/hooks/batch", []byte(data), Module)
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 2 || hooks[1].ID != ReadinessID {
		t.Fatalf("hooks %+v", hooks)
	}
	if s := hooks[0].Config.Schedules[0]; s.Queue != "main" || s.AllowFailure {
		t.Errorf("a plain hook's schedule moved: queue %q, allowFailure %v", s.Queue, s.AllowFailure)
	}
	s := hooks[1].Config.Schedules[0]
	if s.Queue != "readiness-020-m" || !s.AllowFailure || s.Crontab != "*/5 * * * * *" {
		t.Errorf("probe schedule %+v, want queue readiness-020-m, allowed to fail, every 5 s", s)
	}
}
