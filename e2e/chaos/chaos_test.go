package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

const (
	// convergeTimeout bounds one restart's convergence.
	convergeTimeout = 90 * time.Second
	// initialSpan is the kill window before a module run was measured.
	initialSpan = 2 * time.Second
)

// stats counts what the kills of one kill point hit.
type stats struct {
	kills           int
	midHelm         int // the kill left a release pending
	afterConverge   int // the operator had converged before the kill
	changedWhenDown int // the ConfigMap changed again before the restart
	retries         int // failed task or module runs while recovering
}

// chaos is the state of the kill loop.
type chaos struct {
	t       *testing.T
	rng     *rand.Rand
	fixture *fixture
	logs    *os.File
	w       *world
	op      *operatortest.Operator
	// span is how long the module runs of one converge took last time: the
	// window a kill is drawn from.
	span  time.Duration
	stats map[killPoint]*stats
	// rounds holds, per operation, the kill moments left in the current
	// round of the schedule.
	rounds map[operation][]trigger
}

func TestKillDuringHelmConverges(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64() //nolint:gosec // a test schedule, not a secret
	}
	t.Logf("chaos seed %d; replay with -chaos.seed=%d", seed, seed)
	c := &chaos{
		t: t, rng: rand.New(rand.NewPCG(seed, seed)), //nolint:gosec // a replayable test schedule
		fixture: newFixture(t), logs: keptLog(t), span: initialSpan,
		stats: map[killPoint]*stats{}, rounds: map[operation][]trigger{},
	}
	points := killPoints()
	for _, p := range points {
		c.stats[p] = &stats{}
	}
	started := time.Now()
	for i := range *iterationsFlag {
		point := points[i%len(points)]
		c.iteration(i, point)
		if t.Failed() {
			t.Fatalf("iteration %d (%s) failed; replay with -chaos.seed=%d", i, point, seed)
		}
	}
	c.report(time.Since(started))
}

// keptLog returns a file for every operator run's output, kept when the
// test fails.
func keptLog(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp("", "addon-operator-chaos-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Close()
		if t.Failed() {
			t.Logf("operator logs kept in %s", f.Name())
			return
		}
		_ = os.Remove(f.Name())
	})
	return f
}

// iteration starts the operator towards point, kills it at a random moment
// of its module runs, restarts it and checks that it converged alone.
func (c *chaos) iteration(i int, point killPoint) {
	st := c.stats[point]
	from := 0
	switch point {
	case killInstall:
		if c.op != nil {
			c.op.Kill()
		}
		c.w = c.fixture.newWorld(c.t, c.logs)
		c.op = c.w.startOperator()
	case killStartupUpgrade:
		c.op.Kill()
		c.w.bumpGeneration()
		c.op = c.w.startOperator()
	case killLiveUpgrade:
		from = len(c.op.Log().Lines())
		c.w.bumpGeneration()
	}
	tr := c.nextTrigger(point)
	delay, late := c.kill(from, tr)
	left := c.pendingReleases()
	st.kills++
	if len(left) > 0 {
		st.midHelm++
	}
	if late {
		st.afterConverge++
	}
	if tr.changeWhileDown {
		st.changedWhenDown++
		c.w.bumpGeneration()
	}
	c.t.Logf("iteration %d (%s): killed %s after %s (converged before: %v); pending releases %v; ConfigMap changed while down: %v",
		i, point, delay.Round(100*time.Microsecond), tr, late, left, tr.changeWhileDown)

	c.op = c.w.startOperator()
	took, retries := c.converged()
	st.retries += retries
	c.checkConverged(left)
	c.t.Logf("iteration %d: restart converged in %s at generation %d with %d retried runs",
		i, took.Round(time.Millisecond), c.w.generation, retries)
}

// kill waits until the running operator plans the modules (from log line
// index from on) and SIGKILLs it at tr: after a random delay within the
// last measured span of module runs, or a few milliseconds after tr's log
// line. It reports the delay after the trigger and whether the converge had
// finished, the trigger's line never having come.
func (c *chaos) kill(from int, tr trigger) (time.Duration, bool) {
	c.t.Helper()
	// Both draws are made every time, so the choices of later iterations
	// replay from the seed whatever span this machine measured.
	delay := time.Duration(c.rng.Float64() * float64(c.span))
	soon := time.Duration(c.rng.Int64N(int64(2 * time.Millisecond)))
	at := c.waitLog(from, "the modules to be planned", message("modules planned"))
	if tr.msg != "" {
		at = c.waitLog(at, tr.String(), func(l operatortest.Line) bool {
			return convergeDone(l) || (l.Attr("release") == tr.module && strings.HasPrefix(l.Msg, tr.msg))
		})
		delay = soon
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-c.op.Exited():
		c.t.Fatalf("the operator exited before it was killed: %v", c.op.Wait())
	}
	c.op.Kill()
	return delay, slices.ContainsFunc(c.op.Log().Lines()[at:], convergeDone)
}

// convergeDone matches the line that ends a converge.
func convergeDone(l operatortest.Line) bool {
	return l.Msg == "task done" && l.Attr("task") == "ConvergeDone"
}

// waitLog waits for a line of the running operator, failing the test after
// convergeTimeout.
func (c *chaos) waitLog(from int, what string, match func(operatortest.Line) bool) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), convergeTimeout)
	defer cancel()
	i, err := c.op.Log().Wait(ctx, from, match)
	if err != nil {
		c.t.Fatalf("wait for %s: %v\n%s", what, err, c.logTail())
	}
	return i
}

// pendingReleases returns the releases the kill left pending.
func (c *chaos) pendingReleases() []string {
	c.t.Helper()
	rels, err := c.w.releases()
	if err != nil {
		c.t.Fatal(err)
	}
	return pending(rels)
}

// converged waits until the restarted operator is ready (its first converge
// is done) and every module's release is deployed with the current generation and
// the values of its last hook run. It returns how long that took from the
// modules being planned, and how many task or module runs failed and were
// retried meanwhile.
func (c *chaos) converged() (time.Duration, int) {
	c.t.Helper()
	planned := c.waitLog(0, "the modules to be planned", message("modules planned"))
	c.op.WaitReady()
	deadline := time.Now().Add(convergeTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		problems := c.notConverged()
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("not converged within %s of the first converge:\n  %s\n%s", convergeTimeout, strings.Join(problems, "\n  "), c.logTail())
		}
		select {
		case <-tick.C:
		case <-c.t.Context().Done():
			c.t.Fatal(c.t.Context().Err())
		}
	}
	lines := c.op.Log().Lines()
	took := time.Since(lines[planned].Time)
	c.span = min(max(took, initialSpan/4), 2*initialSpan)
	retries := 0
	for _, l := range lines {
		if strings.HasSuffix(l.Msg, "failed, will retry") {
			retries++
		}
	}
	return took, retries
}

// notConverged describes what is not converged yet; empty when all is.
func (c *chaos) notConverged() []string {
	stale, err := c.w.staleModules()
	if err != nil {
		return []string{err.Error()}
	}
	rels, err := c.w.releases()
	if err != nil {
		return append(stale, err.Error())
	}
	return append(stale, undeployed(rels)...)
}

// checkConverged asserts the invariants of a converged world: a clean
// release history, exactly the objects the modules render, and a
// recovery logged for every release the kill left pending.
func (c *chaos) checkConverged(left []string) {
	c.t.Helper()
	rels, err := c.w.releases()
	if err != nil {
		c.t.Fatal(err)
	}
	for _, p := range historyProblems(rels) {
		c.t.Errorf("release history: %s", p)
	}
	got, err := c.w.inventory()
	if err != nil {
		c.t.Fatal(err)
	}
	if diff := cmp.Diff(c.w.expectedObjects(), got); diff != "" {
		c.t.Errorf("objects labelled with a module at generation %d (-rendered +in the cluster):\n%s", c.w.generation, diff)
	}
	for _, name := range left {
		recovered := false
		for _, l := range c.op.Log().Lines() {
			if l.Msg == "recover interrupted release" && l.Attr("release") == name {
				recovered = true
			}
		}
		if !recovered {
			c.t.Errorf("release %s was left pending, but the restart did not log its recovery", name)
		}
	}
}

// logTail returns the running operator's last log lines, for failure
// messages.
func (c *chaos) logTail() string {
	lines := c.op.Log().Lines()
	lines = lines[max(0, len(lines)-40):]
	var b strings.Builder
	b.WriteString("last operator log lines:\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s %v\n", l.Msg, l.Fields)
	}
	return b.String()
}

// report logs what the kills hit and fails when none interrupted a Helm
// operation: the schedule would then test nothing.
func (c *chaos) report(took time.Duration) {
	total := 0
	for _, point := range killPoints() {
		st := c.stats[point]
		total += st.midHelm
		c.t.Logf("%-22s kills %2d, left a release pending %2d, after convergence %2d, ConfigMap changed while down %2d, retried runs while recovering %2d",
			point, st.kills, st.midHelm, st.afterConverge, st.changedWhenDown, st.retries)
	}
	c.t.Logf("%d iterations in %s", *iterationsFlag, took.Round(time.Second))
	if total == 0 && *iterationsFlag >= len(killPoints()) {
		c.t.Error("no kill left a release pending: no Helm operation was interrupted")
	}
}
