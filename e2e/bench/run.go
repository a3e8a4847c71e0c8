package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// Measurement windows.
const (
	healLimit  = 30 * time.Second
	idleSettle = 5 * time.Second
	idleWindow = 20 * time.Second
)

// Env is what every benchmark run shares.
type Env struct {
	// Binary is the operator binary, from BuildOperator.
	Binary string
	// ControlPlane are the etcd and kube-apiserver binaries, from
	// cluster.Build, and the controllers, the scheduler and kwok when
	// cluster.BuildWorkloads set them (the Deployment and chart runs).
	ControlPlane cluster.Binaries
	// Dir is the work directory; each run makes a subdirectory.
	Dir string
	// GroupSize is how many modules share an order prefix; zero means
	// GroupSizeFor(n).
	GroupSize int
	// Chains, when positive, replaces order prefixes by module.yaml
	// dependency chains (GenerateChains).
	Chains int
	// Workers is the --module-workers of the Deployment and chart runs;
	// zero means the operator's default, 4.
	Workers int
	// Workload selects the generated hooks, bash+jq or sh, and the chart's
	// shape.
	Workload Workload
	// Watched is how many ConfigMaps one module's kubernetes hook gets to
	// watch after the other measurements, for the heap they cost; 0
	// skips it.
	Watched int
	// BurstRate and BurstFor are a stream of watch events sent after the
	// other measurements; a zero rate skips it.
	BurstRate int
	BurstFor  time.Duration
	// Samples is how many times each reaction is measured.
	Samples int
	// DriftSamples is how many manual edits the drift detection latency
	// is measured over; 0 is Samples.
	DriftSamples int
	// OperatorArgs are appended to the operator's command line.
	OperatorArgs []string
	// CPUProfile, when set, is a directory that receives CPU profiles of
	// ours in the Deployment runs, from its start to its first converge
	// (<namespace>-NN.pprof, consecutive slices for go tool pprof).
	CPUProfile string
	// Progress receives a line per step.
	Progress io.Writer
}

// Converge is an operator's first converge.
type Converge struct {
	// Wall is from process start to the log line "first converge done".
	Wall time.Duration
	// OperatorCPU is the operator's CPU time until then; HooksCPU that of
	// the hook processes it ran.
	OperatorCPU, HooksCPU time.Duration
	// PeakRSS is the operator's VmHWM then, in bytes; Mem its sampled
	// anonymous peak until then.
	PeakRSS int64
	Mem     MemPeak
	// API are the operator's requests to the API server until then.
	API    APIRequests
	Phases Phases
}

// Result is what one run measured.
type Result struct {
	N, Workers int
	Converge   Converge
	// Change and Event are the ConfigMap-change and watched-event samples.
	Change, Event []Sample
	// Healed are the delete-to-healed times; NotHealed is set when an
	// object was not back within healLimit, which ends the samples.
	Healed    []time.Duration
	NotHealed bool
	// DriftReported are the times from a manual edit of a release object
	// to the operator's report of it; DriftReverted to its revert, with
	// --heal-drift among the operator's arguments.
	DriftReported, DriftReverted []time.Duration
	// Noop are two converges after changes of the global values that
	// change no release: the first reads what the last deployments left
	// unchecked, the second is the steady state.
	Noop [2]Noop
	// Watched is the heap with Env.Watched watched objects; nil when
	// not measured.
	Watched *Watched
	// Burst is how the operator took the event burst; nil when not
	// measured.
	Burst *Burst
	// IdleCPU is in percent of one core; PeakRSS is VmHWM at the end, in
	// bytes; Mem the anonymous peak sampled from the start through the
	// reactions.
	IdleCPU float64
	PeakRSS int64
	Mem     MemPeak
	// LoadBefore and LoadAfter are the machine's 1-minute load averages.
	LoadBefore, LoadAfter string
}

// Run measures the operator over n generated modules on a control plane of
// its own, which is stopped before Run returns.
func Run(ctx context.Context, env Env, n, workers int) (res Result, err error) {
	res = Result{N: n, Workers: workers, LoadBefore: LoadAverage()}
	dir := filepath.Join(env.Dir, "n"+strconv.Itoa(n))
	layout, err := env.generate(dir, n)
	if err != nil {
		return res, err
	}
	cp, client, err := env.startCluster(ctx, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	env.progressf("N=%d: starting the operator with %d module workers", n, workers)
	s, err := env.converge(ctx, cp, client, layout, opts{dir: dir, ns: "bench-n" + strconv.Itoa(n), workers: workers})
	if err != nil {
		return res, err
	}
	defer s.stop()
	res.Converge = s.first
	env.progressf("N=%d: converged in %s", n, s.first.Wall.Round(time.Millisecond))
	if err := env.measure(ctx, s, &res); err != nil {
		return res, err
	}
	res.LoadAfter = LoadAverage()
	return res, nil
}

// measure takes the reaction samples, then idle CPU and peak RSS.
func (env Env) measure(ctx context.Context, s *session, res *Result) error {
	for i := range env.Samples {
		c, err := s.configChange(ctx, s.keys[pick(i, env.Samples, len(s.keys), 0)], fmt.Sprintf("change-%d", i))
		if err != nil {
			return err
		}
		res.Change = append(res.Change, c)
	}
	env.progressf("N=%d: ConfigMap change to upgraded, median %s", res.N, formatDuration(median(totals(res.Change))))
	for i := range env.Samples {
		e, err := s.event(ctx, s.keys[pick(i, env.Samples, len(s.keys), 1)], fmt.Sprintf("event-%d", i))
		if err != nil {
			return err
		}
		res.Event = append(res.Event, e)
	}
	env.progressf("N=%d: event to upgraded, median %s", res.N, formatDuration(median(totals(res.Event))))
	if err := env.measureHeal(ctx, s, res); err != nil {
		return err
	}
	if err := env.measureDrift(ctx, s, res); err != nil {
		return err
	}
	for i := range res.Noop {
		noop, err := s.noopConverge(ctx, strconv.Itoa(i))
		if err != nil {
			return err
		}
		res.Noop[i] = noop
		env.progressf("N=%d: converge with nothing to deploy in %s, %d API requests", res.N, formatDuration(noop.Wall), noop.API.Total())
	}
	res.Mem = s.stopSampling()
	env.progressf("N=%d: measuring idle CPU over %s", res.N, idleWindow)
	var err error
	if res.IdleCPU, err = idleCPU(ctx, s.op.Pid(), idleSettle, idleWindow); err != nil {
		return err
	}
	if res.PeakRSS, err = peakRSS(s.op.Pid()); err != nil {
		return err
	}
	if env.BurstRate > 0 {
		env.progressf("N=%d: %d watch events a second for %s to module %s", res.N, env.BurstRate, env.BurstFor, s.keys[len(s.keys)-1])
		b, err := s.eventBurst(ctx, s.keys[len(s.keys)-1], env.BurstRate, env.BurstFor)
		if err != nil {
			return err
		}
		res.Burst = &b
		env.progressf("N=%d: burst of %d updates absorbed %s after it ended; longest queue %d", res.N, b.Sent, formatDuration(b.Settle), b.MaxQueue)
	}
	if env.Watched == 0 {
		return nil
	}
	env.progressf("N=%d: creating %d objects watched by module %s", res.N, env.Watched, s.keys[0])
	w, err := s.watchedObjects(ctx, s.keys[0], env.Watched)
	if err != nil {
		return err
	}
	res.Watched = &w
	env.progressf("N=%d: %d watched objects: live heap %s -> %s", res.N, w.Objects, formatMB(w.HeapBefore), formatMB(w.HeapAfter))
	return nil
}

// measureHeal deletes a rendered ConfigMap per sample and times its
// return; the first one that does not come back ends the samples.
func (env Env) measureHeal(ctx context.Context, s *session, res *Result) error {
	for i := range env.Samples {
		d, ok, err := s.heal(ctx, s.keys[pick(i, env.Samples, len(s.keys), 2)], healLimit)
		if err != nil {
			return err
		}
		if !ok {
			res.NotHealed = true
			env.progressf("N=%d: a deleted object was not back within %s", res.N, healLimit)
			return nil
		}
		res.Healed = append(res.Healed, d)
	}
	env.progressf("N=%d: delete to healed, median %s", res.N, formatDuration(median(res.Healed)))
	return nil
}

// pick spreads samples over the modules: sample i of count lands at an
// even step through n modules, shifted by offset.
func pick(i, count, n, offset int) int { return (i*n/count + offset) % n }

// SweepResult is the worker sweep's start-to-converged measurements for
// one worker count.
type SweepResult struct {
	Workers int
	Runs    []Converge
}

// Sweep measures start-to-converged over n modules for every worker count,
// rounds times, each in a fresh namespace of one control plane. Odd rounds
// go through the worker counts backwards, so a change in the machine's
// load during the sweep does not favour one end.
func Sweep(ctx context.Context, env Env, n int, workers []int, rounds int) (res []SweepResult, err error) {
	dir := filepath.Join(env.Dir, "sweep")
	layout, err := env.generate(dir, n)
	if err != nil {
		return nil, err
	}
	cp, client, err := env.startCluster(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	res = make([]SweepResult, len(workers))
	for round := range rounds {
		for k := range workers {
			if round%2 == 1 {
				k = len(workers) - 1 - k
			}
			w := workers[k]
			r, err := env.sweepRun(ctx, cp, client, layout, opts{
				dir: filepath.Join(dir, fmt.Sprintf("r%d-w%d", round, w)), ns: fmt.Sprintf("bench-sweep-r%d-w%d", round, w), workers: w,
			})
			if err != nil {
				return completed(res), err
			}
			env.progressf("sweep round %d: %d workers, N=%d converged in %s", round+1, w, n, r.Wall.Round(time.Millisecond))
			res[k].Workers = w
			res[k].Runs = append(res[k].Runs, r)
		}
	}
	return res, nil
}

// completed drops worker counts without a finished run.
func completed(res []SweepResult) []SweepResult {
	return slices.DeleteFunc(res, func(r SweepResult) bool { return len(r.Runs) == 0 })
}

// sweepRun starts the operator, waits for the first converge and stops it.
func (env Env) sweepRun(ctx context.Context, cp *cluster.ControlPlane, client kubernetes.Interface, layout Layout, o opts) (Converge, error) {
	s, err := env.converge(ctx, cp, client, layout, o)
	if err != nil {
		return Converge{}, err
	}
	s.stop()
	return s.first, nil
}

// opts are the per-run choices of converge.
type opts struct {
	dir, ns string
	workers int
	// args are more operator flags, after env.OperatorArgs.
	args []string
}

// converge prepares a namespace and starts the operator in it.
func (env Env) converge(ctx context.Context, cp *cluster.ControlPlane, client kubernetes.Interface, layout Layout, o opts) (*session, error) {
	if err := os.MkdirAll(o.dir, 0o750); err != nil {
		return nil, fmt.Errorf("create run dir: %w", err)
	}
	if err := createNamespace(ctx, client, o.ns); err != nil {
		return nil, err
	}
	return startConverged(ctx, client, OperatorOptions{
		Binary: env.Binary, Kubeconfig: cp.Kubeconfig, Namespace: o.ns,
		Layout: layout, Workers: o.workers, Dir: o.dir, Args: append(slices.Clone(env.OperatorArgs), o.args...),
	})
}

// startCluster starts a control plane with its data in dir/control-plane.
func (env Env) startCluster(ctx context.Context, dir string) (*cluster.ControlPlane, kubernetes.Interface, error) {
	return env.startClusterWith(ctx, dir, nil)
}

// startClusterWith starts a control plane as startCluster does, with the
// controllers, the scheduler and simulated nodes when w is set
// (env.ControlPlane.Workloads must be built then).
func (env Env) startClusterWith(ctx context.Context, dir string, w *cluster.Workloads) (*cluster.ControlPlane, kubernetes.Interface, error) {
	cpDir := filepath.Join(dir, "control-plane")
	if err := os.MkdirAll(cpDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create control-plane dir: %w", err)
	}
	cp, err := cluster.Start(ctx, cluster.Options{Binaries: env.ControlPlane, Dir: cpDir, Log: io.Discard, Workloads: w})
	if err != nil {
		return nil, nil, fmt.Errorf("start control plane: %w", err)
	}
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("client for control plane: %w", err), stopCluster(cp))
	}
	return cp, client, nil
}

func stopCluster(cp *cluster.ControlPlane) error {
	if err := cp.Stop(); err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}

// GroupSizeFor is the default group size for n modules: 10 order groups,
// of at least 10 modules each (N=10: one group; N=100: 10 of 10; N=1000:
// 10 of 100).
func GroupSizeFor(n int) int { return max(n/10, 10) }

func (env Env) groupSize(n int) int {
	if env.GroupSize > 0 {
		return env.GroupSize
	}
	return GroupSizeFor(n)
}

func (env Env) progressf(format string, args ...any) {
	if env.Progress != nil {
		fmt.Fprintf(env.Progress, format+"\n", args...)
	}
}

// generate writes the modules of a run: order groups, or dependency
// chains with Env.Chains.
func (env Env) generate(dir string, n int) (Layout, error) {
	if env.Chains > 0 {
		return GenerateChains(dir, n, env.Chains, env.Workload)
	}
	return Generate(dir, n, env.groupSize(n), env.Workload)
}
