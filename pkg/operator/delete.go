package operator

import (
	"context"
	"errors"

	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// A disabled module's delete is an attempt of the module on the pool, not
// work on the main queue: its hooks' processes (beforeDeleteHelm,
// afterDeleteHelm) are parked like a run's, so a hung one holds neither
// main nor a worker until its timeout, and runs of the module (enabled
// again meanwhile) wait for the delete's end. The converge waits for it
// on main without holding main: ModuleDelete asks for the delete, its end
// queues ModuleDeleted, and only then the next delete, the purges and the
// module runs follow, as before. A module's phase is Deleting from
// ModuleDelete until its delete succeeded; its attempts delete it.

// startDelete cancels the module's run in flight or backing off (it would
// race the uninstall) and asks the pool for its delete, the converge
// waiting for its end. Main queue worker only.
func (o *Operator) startDelete(name string) {
	o.pool.Cancel(name)
	o.state.runs.Forget(name)
	o.state.update(name, func(s *moduleState) { s.Phase = status.PhaseDeleting })
	o.converge.deleting = name
	o.pool.Request(name, func(err error) { o.main.PushFront(moduleDeletedTask{module: name, err: err}) })
}

// deleted is the end of a module's delete attempt: once it succeeded (or
// cannot be retried) the converge goes on; a failed one retries on the
// pool with backoff, and the converge follows its next attempt.
func (o *Operator) deleted(t moduleDeletedTask) []task {
	next, follow := o.converge.deleteEnded(t)
	if follow {
		o.pool.Notify(t.module, func(err error) { o.main.PushFront(moduleDeletedTask{module: t.module, err: err}) })
	}
	return next
}

// deleteEnded records the end of the delete attempt t: it returns the
// converge's next tasks, or follow when the delete retries and its next
// attempt is to be followed.
func (c *convergeState) deleteEnded(t moduleDeletedTask) (next []task, follow bool) {
	if t.module != c.deleting {
		return nil, false
	}
	if t.err != nil && !queue.IsTerminal(t.err) && !errors.Is(t.err, runner.ErrCancelled) {
		return nil, true
	}
	c.deleting = ""
	return c.nextDelete(), false
}

// nextDelete starts the converge's next delete, or once none is left and
// none runs, returns what follows the deletes.
func (c *convergeState) nextDelete() []task {
	switch {
	case c.deleting != "":
		return nil // its end goes on
	case len(c.deletes) > 0:
		name := c.deletes[0]
		c.deletes = c.deletes[1:]
		return []task{moduleDeleteTask{module: name}}
	}
	rest := c.rest
	c.rest = nil
	return rest
}

// deleteAttempt is a module's delete as its attempt on the pool. A
// failure is kept and logged as the ModuleDelete task's were, the module
// staying Deleting while the pool retries it with backoff; a module
// enabled again meanwhile runs next.
func (o *Operator) deleteAttempt(ctx context.Context, name string) (runner.Result, error) {
	start := o.clock.Now()
	err := o.moduleDelete(ctx, name)
	if err != nil {
		m, _ := o.modules.Module(name)
		o.learnValues(m)
	}
	var enabled bool
	o.state.update(name, func(s *moduleState) {
		if err != nil {
			s.LastError = err.Error()
		} else {
			s.Phase = phaseAfter(true, s.Enabled, nil)
		}
		enabled = s.Enabled
	})
	logTaskEnd(o.log, moduleDeleteTask{module: name}, o.clock.Since(start), err)
	return runner.Result{Again: err == nil && enabled}, err
}
