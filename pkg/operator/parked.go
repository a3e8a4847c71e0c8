package operator

import (
	"context"
	"errors"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/release"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// parkedRun is the rest of attempt a of a module once its release was
// applied: step's wait runs without a worker, then its afterHelm hooks on
// one. A wait for a lower werf.io/weight's objects
// (release.ErrNextWeight) deploys again on a worker, for the next weight
// or the whole release, and parks again for what that deploy applied.
type parkedRun struct {
	o    *Operator
	a    attemptRecord
	step moduleStep
}

// result is the runner's Result for the parked attempt.
func (p parkedRun) result() runner.Result {
	o, name := p.o, p.a.name
	var superseded, next bool // set by Await, read by Then, which runs after it
	return runner.Result{
		Await: func(ctx context.Context) error {
			p.o.state.runs.Step(p.a.name, status.StepReadiness)
			err := p.step.wait(ctx)
			m, _ := o.modules.Module(name)
			switch {
			case errors.Is(err, release.ErrSuperseded):
				superseded = true
				return nil
			case errors.Is(err, release.ErrNextWeight):
				next = true
				return nil
			case err != nil:
				o.upkeep.AfterDeploy(ctx, m, err)
				_, err = o.endAttempt(ctx, p.a, false, err)
				return err
			}
			o.upkeep.AfterDeploy(ctx, m, nil)
			return nil
		},
		Then: func(ctx context.Context, name string) (runner.Result, error) {
			if superseded {
				// Its inputs changed while it waited for its objects: the
				// run asked for by the change starts at once and waits for
				// what it deploys. Neither a failure nor ready.
				o.log.Info("readiness wait ended by new inputs, running again", slog.String(logkey.Module, name))
				return runner.Result{Again: true}, nil
			}
			defer o.releases.Pause(name)()
			if next {
				return p.deployNext(ctx)
			}
			again, err := o.afterHelm(ctx, name, p.step.hooks)
			return o.endAttempt(ctx, p.a, again, err)
		},
	}
}

// deployNext deploys the module again once a lower werf.io/weight of its
// release is ready.
func (p parkedRun) deployNext(ctx context.Context) (runner.Result, error) {
	o := p.o
	m, _ := o.modules.Module(p.a.name)
	wait, err := o.deploy(ctx, m)
	if err != nil {
		return o.endAttempt(ctx, p.a, false, err)
	}
	if wait != nil {
		return parkedRun{o: o, a: p.a, step: moduleStep{wait: wait, hooks: p.step.hooks}}.result(), nil
	}
	again, err := o.afterHelm(ctx, p.a.name, p.step.hooks)
	return o.endAttempt(ctx, p.a, again, err)
}
