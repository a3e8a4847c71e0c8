package operator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/runner"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// runModules starts on the module pool the modules of the converge's
// schedule that may start, and queues the afterAll hooks once the pass is
// over. A task of an older converge (restarted since) does nothing.
func (o *Operator) runModules(gen int) []task {
	if gen != o.converge.gen || o.converge.schedule == nil {
		return nil
	}
	s := o.converge.schedule
	for _, name := range s.Next() {
		o.state.update(name, func(st *moduleState) { st.Held = false })
		// A converge follows a change of global values or of the enabled
		// set, inputs of every module: a failing one need not wait out its
		// backoff.
		o.pool.RetryNowFollowing(name, o.followAttempt(gen, name), func() {
			o.main.PushFront(moduleDoneTask{gen: gen, module: name, applied: true})
		})
	}
	o.markHeld()
	if !s.Done() || o.converge.passDone {
		return nil
	}
	o.converge.passDone = true
	return []task{afterAllTask{}}
}

// followAttempt returns the pool waiter that reports a module's attempt to
// the converge of generation gen, at the head of the main queue.
func (o *Operator) followAttempt(gen int, name string) func(error) {
	return func(err error) { o.main.PushFront(moduleDoneTask{gen: gen, module: name, err: err}) }
}

// moduleDone records an attempt of a module of the converge's schedule.
// A module that is not ready after it is followed into its next attempt
// (the pool retries it with backoff), so that what requires it starts once
// it is ready.
func (o *Operator) moduleDone(t moduleDoneTask) []task {
	if t.gen != o.converge.gen || o.converge.schedule == nil {
		return nil
	}
	if t.applied {
		o.converge.schedule.Applied(t.module)
		return o.runModules(t.gen)
	}
	isReady := t.err == nil && o.state.get(t.module).Phase == status.PhaseReady
	o.converge.schedule.Finished(t.module, isReady)
	if !isReady && !errors.Is(t.err, runner.ErrCancelled) {
		o.pool.Notify(t.module, o.followAttempt(t.gen, t.module))
	}
	return o.runModules(t.gen)
}

// markHeld shows, for each module the schedule holds back, which
// requirements it waits for.
func (o *Operator) markHeld() {
	s := o.converge.schedule
	for _, m := range o.requiring { // only requirements hold a module back by name
		name := m.Name()
		st := o.state.get(name)
		if !st.Enabled || (st.Phase != status.PhaseWaiting && !st.Held) {
			continue
		}
		var reqs []string
		for _, w := range s.WaitingFor(name) {
			if slices.Contains(m.Requires(), w) {
				reqs = append(reqs, w)
			}
		}
		if len(reqs) == 0 {
			continue
		}
		o.state.update(name, func(st *moduleState) {
			st.Held, st.Phase = true, status.PhaseWaiting
			st.Message = waitingForModules(reqs)
		})
	}
}

// unready returns the modules a module requires that are not ready now.
func (o *Operator) unready(name string) []string {
	m, _ := o.modules.Module(name)
	var out []string
	for _, req := range m.Requires() {
		if o.state.get(req).Phase != status.PhaseReady {
			out = append(out, req)
		}
	}
	return out
}

// wakeDependents asks for a run of each module held because it requires
// name, which is ready now.
func (o *Operator) wakeDependents(name string) {
	for _, m := range o.requiring {
		dep := m.Name()
		st := o.state.get(dep)
		if st.Enabled && st.Held && slices.Contains(m.Requires(), name) && len(o.unready(dep)) == 0 {
			o.pool.Request(dep, nil)
		}
	}
}

func waitingForModules(names []string) string {
	return fmt.Sprintf("waiting for module %s to be ready", strings.Join(names, ", "))
}

// dependentsFirst returns the modules of names in reverse of order: a
// module is deleted before the modules it requires.
func dependentsFirst(order, names []string) []string {
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	var out []string
	for _, n := range slices.Backward(order) {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}

// readinessProgress shows what a module's run waits for to be ready.
func (o *Operator) readinessProgress(name string, p readiness.Pending) {
	o.state.update(name, func(s *moduleState) { s.Message = "waiting for " + p.String() })
	if o.recorder != nil {
		o.recorder.ModuleReadiness(name, false, p.Object.Kind)
	}
}

// recordReadiness keeps the readiness metric after a run and lets the
// modules held for this one run once it is ready.
func (o *Operator) recordReadiness(name string, err error, again bool) {
	if again {
		return
	}
	ready := err == nil && o.state.get(name).Phase == status.PhaseReady
	if o.recorder != nil {
		o.recorder.ModuleReadiness(name, ready, "")
	}
	if ready {
		o.wakeDependents(name)
	}
}
