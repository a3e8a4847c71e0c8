package operator

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/schedule"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestNextRunTimeFollowsTheSchedule: a module whose hook has schedule
// bindings hands over the earliest instant one fires next; a tick moves it
// on; a module without schedules has none.
func TestNextRunTimeFollowsTheSchedule(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 8, 7, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	runner := &fakeRunner{configOf: func(path string) (string, bool) {
		if filepath.Base(filepath.Dir(filepath.Dir(path))) != "020-b" {
			return "", false
		}
		return "configVersion: v1\nonStartup: 1\nschedule:\n- name: hourly\n  crontab: '0 * * * *'\n- name: quarter\n  crontab: '*/15 * * * *'\n", true
	}}
	objs := &fakeObjects{updates: map[string][]moduleobject.State{}}
	o, _ := newTestOperatorWith(t, runner, func(d *Deps) {
		d.ModuleObjects, d.Clock = objs, clk
		d.Scheduler = schedule.New(clk, make(chan schedule.Tick))
	})
	runUntil(t, o, o.Ready)

	if got, want := objs.last("b").NextRun, t0.Add(8*time.Minute); !got.Equal(want) {
		t.Errorf("next run of b = %s, want %s (the quarter hour)", got, want)
	}
	if got := objs.last("a").NextRun; !got.IsZero() {
		t.Errorf("next run of a = %s, want none: it has no schedule bindings", got)
	}

	// The module page shows the same times.
	d, err := o.Pages().ModuleDetail(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if want := (status.RunTimes{LastRun: t0, NextRun: t0.Add(8 * time.Minute)}); !cmp.Equal(d.Times, want) {
		t.Errorf("module page's run times of b = %+v, want %+v", d.Times, want)
	}

	due := t0.Add(8 * time.Minute)
	clk.SetTime(due)
	hooks := o.state.get("b").Hooks
	if len(hooks) != 1 {
		t.Fatalf("hooks of b = %d, want 1", len(hooks))
	}
	o.routeTick(schedule.Tick{ID: binding.ID("b", hooks[0], hook.Schedule, 1), Time: due})
	if got, want := objs.last("b").NextRun, due.Add(15*time.Minute); !got.Equal(want) {
		t.Errorf("next run of b after its tick = %s, want %s", got, want)
	}
}
