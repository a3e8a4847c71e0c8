package operator

import (
	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/operator/pages"
	"github.com/addon-operator/addon-operator/pkg/runlog"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// runLog records the steps of module runs for the status page's module
// pages and timeline; *runlog.Log is the real one, and a nil one records
// nothing.
type runLog interface {
	Held(module string)
	Begin(module string)
	Step(module, step string)
	End(module string, err error)
	Forget(module string)
	Runs(module string) []status.Run
	All() []status.ModuleRuns
}

// orNoRuns is runs, or a Log that records nothing.
func orNoRuns(runs runLog) runLog {
	if runs == nil {
		return (*runlog.Log)(nil)
	}
	return runs
}

// Pages returns what answers the status page's module pages and converge
// timeline, each module's run times as its Module object carries them.
func (o *Operator) Pages() *pages.Pages {
	times := func(name string) status.RunTimes {
		s := objectState(o.state.get(name), false, o.clock.Now())
		t := status.RunTimes{LastRun: s.LastRun, LastRunDuration: s.LastRunDuration, NextRun: s.NextRun}
		if o.pool != nil {
			t.Attempts, t.NextRetry = o.pool.Failures(name), o.pool.NextRetry(name)
		}
		return t
	}
	return pages.New(o.modules, func(name string) []*binding.Hook { return o.state.get(name).Hooks }, o.state.runs, o.releases, o.moduleEvents).
		WithRunTimes(times)
}
