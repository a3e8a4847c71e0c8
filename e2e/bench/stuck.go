package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// stuckDelay is the Pod start delay of the module that never becomes
// ready: longer than any run of the bench.
const stuckDelay = time.Hour

// StuckSide is one run of ours for DeployStuck, from the process start.
type StuckSide struct {
	// Others is until every module but the stuck one logged its first
	// "module run done": its run, readiness wait included, ended.
	Others time.Duration
	// OthersAvailable is until their Deployments were all available.
	OthersAvailable time.Duration
	// Converge is the first converge ("first converge done"); zero when
	// it did not come within the run (a module never became ready).
	Converge time.Duration
	// CPU is the operator's and its hooks' CPU time until then.
	CPU time.Duration
	// Load is the machine's 1-minute load average at the start.
	Load string
}

// StuckResult is the converge of N generated Deployment modules, without
// and with the first module's Pod never starting.
type StuckResult struct {
	N     int
	Delay time.Duration
	// Stuck is the module whose Deployment never becomes available in
	// the With run.
	Stuck         string
	Without, With StuckSide
}

// DeployStuck measures ours twice over n generated modules of the
// Deployment shape whose Pods start delay after they are bound: as they
// are, and with the first module's Pod starting only after stuckDelay,
// so that its Deployment never becomes available in the run. The first
// module is of the first order group, which every other group follows.
// The two runs go at the same time, each on a control plane of its own,
// so that both share whatever else loads the machine. Both report when
// the other modules' runs and Deployments were done.
func DeployStuck(ctx context.Context, env Env, n int, delay time.Duration) (StuckResult, error) {
	res := StuckResult{N: n, Delay: delay}
	w := env.Workload
	w.Deployment, w.StartDelay = true, delay
	layouts := map[bool]Layout{}
	for _, stuck := range []bool{false, true} {
		layout, err := Generate(filepath.Join(env.Dir, stuckRunName(n, delay, stuck)), n, env.groupSize(n), w)
		if err != nil {
			return res, err
		}
		if stuck {
			if err := delayModulePod(layout, delay, stuckDelay); err != nil {
				return res, err
			}
		}
		layouts[stuck] = layout
		res.Stuck = layout.Keys[0]
	}
	env.progressf("deployments N=%d, delay %s: without and with %s never ready, at the same time", n, delay, res.Stuck)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, stuck := range []bool{false, true} {
		wg.Go(func() {
			name := stuckRunName(n, delay, stuck)
			side, err := env.othersSide(ctx, filepath.Join(env.Dir, name, "ours"), "bench-"+name, layouts[stuck], &cluster.Workloads{PodStartDelay: delay}, !stuck)
			if err != nil {
				errs[i] = fmt.Errorf("%s never ready %t: %w", res.Stuck, stuck, err)
				return
			}
			env.progressf("deployments N=%d, delay %s, %s never ready %t: the others done in %s, available in %s", n, delay, res.Stuck, stuck,
				formatDuration(side.Others), formatDuration(side.OthersAvailable))
			if stuck {
				res.With = side
			} else {
				res.Without = side
			}
		})
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

func stuckRunName(n int, delay time.Duration, stuck bool) string {
	if stuck {
		return fmt.Sprintf("stuck-n%d-d%s", n, delay)
	}
	return fmt.Sprintf("unstuck-n%d-d%s", n, delay)
}

// delayModulePod rewrites the first module's Deployment so that its Pod
// starts after stuck instead of delay.
func delayModulePod(l Layout, delay, stuck time.Duration) error {
	path := filepath.Join(l.ModulesDir, fmt.Sprintf("%03d-%s", 10, l.Keys[0]), "templates", "deployment.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	from := cluster.AnnotationStartDelay + `: "` + delay.String() + `"`
	if !strings.Contains(string(data), from) {
		return fmt.Errorf("%s: no %s", path, from)
	}
	out := strings.Replace(string(data), from, cluster.AnnotationStartDelay+`: "`+stuck.String()+`"`, 1)
	return writeFile(path, out, 0o644)
}

// othersSide runs ours over layout on a control plane of its own until
// every module but the first ended its first run and has its Deployment
// available and, with wantConverge, until the first converge.
func (env Env) othersSide(ctx context.Context, dir, ns string, layout Layout, w *cluster.Workloads, wantConverge bool) (side StuckSide, err error) {
	side.Load = LoadAverage()
	cp, client, err := env.startClusterWith(ctx, dir, w)
	if err != nil {
		return side, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	if err := createNamespace(ctx, client, ns); err != nil {
		return side, err
	}
	others := layout.Keys[1:]
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	avail := watchAvailable(wctx, client, ns, others)
	op, err := StartOperator(ctx, OperatorOptions{
		Binary: env.Binary, Kubeconfig: cp.Kubeconfig, Namespace: ns, Layout: layout, Workers: env.workers(), Dir: dir, Args: env.OperatorArgs,
	})
	if err != nil {
		return side, err
	}
	defer op.Stop()
	for _, m := range others {
		e, err := op.Logs.Wait(wctx, 0, Message(msgRunDone, "module", m))
		if err != nil {
			return side, fmt.Errorf("wait for module %s's run (log %s): %w", m, op.LogPath(), err)
		}
		side.Others = max(side.Others, e.Time().Sub(op.Started))
	}
	at, err := avail.wait(ctx)
	if err != nil {
		return side, fmt.Errorf("log %s: %w", op.LogPath(), err)
	}
	side.OthersAvailable = at.Sub(op.Started)
	if wantConverge {
		e, err := op.Logs.Wait(wctx, 0, Message(msgConverged))
		if err != nil {
			return side, fmt.Errorf("wait for the first converge (log %s): %w", op.LogPath(), err)
		}
		side.Converge = e.Time().Sub(op.Started)
	}
	cpu, err := readCPU(op.Pid())
	if err != nil {
		return side, err
	}
	hz := clockTicks(ctx)
	side.CPU = cpuDuration(cpu.self, hz) + cpuDuration(cpu.children, hz)
	return side, nil
}

// StuckMarkdown renders DeployStuck's runs.
func StuckMarkdown(runs []StuckResult) string {
	var b strings.Builder
	b.WriteString("| N | pod start delay | module never ready | the others' runs done | their Deployments available | first converge | CPU (operator + hooks) | load (1 min) at the start |\n" +
		"| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |\n")
	for i := range runs {
		r := &runs[i]
		for _, s := range []struct {
			stuck string
			side  StuckSide
		}{{"none", r.Without}, {r.Stuck, r.With}} {
			conv := "not within the run"
			if s.side.Converge > 0 {
				conv = formatDuration(s.side.Converge)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", r.N, r.Delay, s.stuck, formatDuration(s.side.Others),
				formatDuration(s.side.OthersAvailable), conv, formatDuration(s.side.CPU), s.side.Load)
		}
		if r.Without.Others > 0 {
			fmt.Fprintf(&b, "| | | with / without | %.2fx | %.2fx | | | |\n", float64(r.With.Others)/float64(r.Without.Others),
				float64(r.With.OthersAvailable)/float64(r.Without.OthersAvailable))
		}
	}
	return b.String()
}
