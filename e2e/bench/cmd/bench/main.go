// Command bench measures the addon-operator binary over generated modules
// against local control planes and prints a Markdown report (see
// docs/benchmarks.md):
//
//	go run ./e2e/bench/cmd/bench [-n 10,100|none] [-workers 4] [-workers-sweep 1,2,4,8] [-objects-n 100] [-out FILE]
//	    [-hooks jq|sh] [-hook-runs 200] [-reference 100]
//	    [-deploy-n 100,1000 -deploy-delays 0s,2s -deploy-reference 100] [-deploy-stuck 100] [-cpuprofile DIR]
//	    [-charts ../shared/corpus/charts]
//	    [-operator-args '--kube-client-qps=20 --kube-client-burst=10']
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/addon-operator/addon-operator/e2e/bench"
	"github.com/addon-operator/addon-operator/e2e/cluster"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 2
	}
	if err := o.run(ctx, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// options are the command's flags.
type options struct {
	sizes []int
	// jq is the jq binary hooks run with ("" for the PATH's), jqVersion
	// what it reported.
	jq, jqVersion string
	workers       int
	sweep         []int
	sweepN        int
	rounds        int
	groupSize     int
	chains        int
	samples       int
	driftSamples  int
	workload      bench.Workload
	// deployN are the module counts of the Deployment converge, at each
	// of deployDelays; deployRef those the reference runs too.
	deployN, deployRef []int
	deployDelays       []time.Duration
	// deployStuck are the module counts of DeployStuck, at each of
	// deployDelays.
	deployStuck []int
	// cpuProfile is Env.CPUProfile.
	cpuProfile string
	// charts is the corpus's charts directory ("" skips the charts run),
	// chartsDelay its pod start delay; chartsRef runs the reference too.
	charts      string
	chartsDelay time.Duration
	chartsRef   bool
	// refBin is the reference binary once built.
	refBin    *string
	hookRuns  int
	watched   int
	burst     int
	burstFor  time.Duration
	reference []int
	out       string
	operator  string
	// operatorArgs are appended to the operator's command line.
	operatorArgs argsFlag
	keep         bool
	// objectsN and objectsRounds size the comparison with and without
	// Module objects; 0 skips it.
	objectsN, objectsRounds int
	// lang is the LANG hooks run with ("" for none, the image's), locale
	// its name in the report.
	lang, locale string
}

// argsFlag collects arguments: every use of the flag adds its value split
// on spaces, so "-operator-args=--a=1 -operator-args=--b=2" and
// "-operator-args '--a=1 --b=2'" mean the same. Quoting is not supported.
type argsFlag []string

func (a *argsFlag) String() string { return strings.Join(*a, " ") }

func (a *argsFlag) Set(s string) error {
	*a = append(*a, strings.Fields(s)...)
	return nil
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("n", "10,100", "numbers of generated modules, one run each")
	sweep := fs.String("workers-sweep", "", "module worker counts for a start-to-converged sweep, e.g. 1,2,4,8")
	fs.IntVar(&o.workers, "workers", 4, "--module-workers of the operator in the runs of -n")
	fs.IntVar(&o.sweepN, "sweep-n", 100, "number of modules in the sweep")
	fs.IntVar(&o.rounds, "sweep-rounds", 1, "how often the sweep goes through the worker counts (alternating direction)")
	fs.IntVar(&o.groupSize, "group", 0, "modules per order prefix (modules of one order run in parallel); 0: N/10, at least 10 (10 order groups)")
	fs.IntVar(&o.chains, "chains", 0, "instead of order prefixes, this many module.yaml dependency chains (each module requires the one before in its chain)")
	fs.IntVar(&o.samples, "samples", 5, "samples per reaction measurement")
	fs.IntVar(&o.driftSamples, "drift-samples", 20, "manual edits the drift detection latency is measured over")
	hooks := fs.String("hooks", string(bench.HooksJQ), "generated hooks: jq (bash and jq, as users write them) or sh (POSIX sh, sed and grep)")
	deployN := fs.String("deploy-n", "", "numbers of generated modules whose charts hold a Deployment, for a start to all Deployments available, e.g. 100,1000; empty skips it")
	deployDelays := fs.String("deploy-delays", "0s,2s", "pod start delays of the simulated nodes for -deploy-n, one run each")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "directory for CPU profiles of ours in the -deploy-n runs, from its start to its first converge (<namespace>-NN.pprof: consecutive 5 s slices through the debug socket; go tool pprof merges them)")
	deployStuck := fs.String("deploy-stuck", "", "numbers of generated Deployment modules ours runs, at each of -deploy-delays, without and with the first module's Pod never ready (an hour's start delay), for when the other modules are done, e.g. 100; empty skips it")
	deployRef := fs.String("deploy-reference", "", "numbers of -deploy-n the reference v1.5.0 runs too, e.g. 100")
	fs.StringVar(&o.charts, "charts", "", "the corpus's charts directory (e.g. ../shared/corpus/charts): its charts as modules, start to all Deployments available, ours and the reference; empty skips it")
	fs.DurationVar(&o.chartsDelay, "charts-delay", 2*time.Second, "pod start delay of the simulated nodes for -charts")
	fs.BoolVar(&o.chartsRef, "charts-reference", true, "run the reference on -charts too")
	fs.IntVar(&o.hookRuns, "hook-runs", 200, "runs of one hook, bash+jq and compiled with pkg/sdk, for the hook cost table; 0 skips it")
	fs.IntVar(&o.watched, "watched", 0, "after the other measurements, ConfigMaps one module's kubernetes hook watches, for their heap (e.g. 10000); 0 skips it")
	fs.IntVar(&o.burst, "burst", 0, "after the other measurements, updates a second to objects one module watches, for -burst-for (e.g. 200); 0 skips it")
	fs.DurationVar(&o.burstFor, "burst-for", time.Minute, "how long -burst lasts")
	reference := fs.String("reference", "", "numbers of modules to run the established addon-operator v1.5.0 on (built from e2e/bench/reference with cgo), e.g. 100; empty skips it")
	fs.StringVar(&o.out, "out", "", "also write the report to this file")
	fs.StringVar(&o.operator, "operator", "", "operator binary to measure instead of building ./cmd/addon-operator (e.g. another commit's)")
	fs.Var(&o.operatorArgs, "operator-args", "arguments appended to the operator's start command line, split on spaces; may be repeated (e.g. --kube-client-qps=20)")
	fs.IntVar(&o.objectsN, "objects-n", 0, "number of modules of a start-to-converged comparison with and without Module objects; 0 skips it")
	fs.IntVar(&o.objectsRounds, "objects-rounds", 3, "how often the comparison runs each side")
	fs.StringVar(&o.jq, "jq", "", "jq binary the hooks run with, put first on the PATH of the operators under test (make bench passes hack/jq/build.sh's jq 1.7.1, the image's); empty: the PATH's jq")
	fs.StringVar(&o.lang, "lang", "", "LANG the operators and their hooks run with; empty: no locale variable, as in the operator's image (the caller's LANG and LC_* are not passed on)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (operator and control-plane logs)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err1, err2, err3, err4 error
	if *sizes != "none" {
		o.sizes, err1 = parseInts(*sizes)
	}
	if *reference != "" {
		o.reference, err4 = parseInts(*reference)
	}
	o.workload.Hooks, err3 = bench.ParseHooks(*hooks)
	errDeploy := o.parseDeploy(*deployN, *deployDelays, *deployRef)
	var errStuck error
	if *deployStuck != "" {
		if o.deployStuck, errStuck = parseInts(*deployStuck); errStuck != nil {
			errStuck = fmt.Errorf("-deploy-stuck: %w", errStuck)
		} else if *deployN == "" {
			// parseDeploy reads the delays only with -deploy-n.
			if o.deployDelays, errStuck = parseDurations(*deployDelays); errStuck != nil {
				errStuck = fmt.Errorf("-deploy-delays: %w", errStuck)
			}
		}
	}
	if *sweep != "" {
		o.sweep, err2 = parseInts(*sweep)
	}
	if o.workers < 1 || o.groupSize < 0 || o.chains < 0 || o.samples < 1 || o.driftSamples < 1 || o.sweepN < 1 || o.rounds < 1 || o.hookRuns < 0 ||
		o.watched < 0 || o.burst < 0 || o.burstFor <= 0 || o.objectsN < 0 || o.objectsRounds < 1 {
		return o, errors.New("-workers, -samples, -drift-samples, -sweep-n, -sweep-rounds, -objects-rounds must be positive, -group, -chains, -hook-runs, -watched, -burst and -objects-n not negative, -burst-for positive")
	}
	o.refBin = new(string)
	return o, errors.Join(err1, err2, err3, err4, errDeploy, errStuck, bench.CheckOperatorArgs(o.operatorArgs))
}

// parseDeploy parses -deploy-n, -deploy-delays and -deploy-reference: the
// reference's sizes must be among -deploy-n.
func (o *options) parseDeploy(sizes, delays, ref string) error {
	if sizes == "" {
		return nil
	}
	var err error
	if o.deployN, err = parseInts(sizes); err != nil {
		return fmt.Errorf("-deploy-n: %w", err)
	}
	if o.deployDelays, err = parseDurations(delays); err != nil {
		return fmt.Errorf("-deploy-delays: %w", err)
	}
	if ref == "" {
		return nil
	}
	if o.deployRef, err = parseInts(ref); err != nil {
		return fmt.Errorf("-deploy-reference: %w", err)
	}
	for _, n := range o.deployRef {
		if !slices.Contains(o.deployN, n) {
			return fmt.Errorf("-deploy-reference %d is not among -deploy-n %s", n, sizes)
		}
	}
	return nil
}

// parseDurations parses "0s,2s": durations not negative.
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for f := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a list of durations", s)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseInts parses "10,100".
func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a list of positive numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// run builds what it needs, runs every measurement and prints the report.
func (o options) run(ctx context.Context, stdout, progress io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "addon-operator-bench-")
	if err != nil {
		return fmt.Errorf("create work dir: %w", err)
	}
	defer func() {
		if o.keep || err != nil {
			fmt.Fprintf(progress, "work directory with logs kept: %s\n", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	if o.locale, err = bench.UseLocale(o.lang); err != nil {
		return err
	}
	if o.jqVersion, err = bench.UseJQ(ctx, o.jq, dir); err != nil {
		return err
	}
	env, err := o.env(ctx, dir, progress)
	if err != nil {
		return err
	}
	report, err := o.measure(ctx, env)
	if report != "" {
		fmt.Fprint(stdout, report)
	}
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(report), 0o600); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}

// env builds the operator and the control plane (or finds them cached).
func (o options) env(ctx context.Context, dir string, progress io.Writer) (bench.Env, error) {
	bin := o.operator
	if bin == "" {
		fmt.Fprintln(progress, "building the operator")
		var err error
		if bin, err = bench.BuildOperator(ctx, dir); err != nil {
			return bench.Env{}, err
		}
	}
	if o.cpuProfile != "" {
		if err := os.MkdirAll(o.cpuProfile, 0o750); err != nil {
			return bench.Env{}, fmt.Errorf("-cpuprofile: %w", err)
		}
	}
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		return bench.Env{}, err
	}
	bins, err := cluster.Build(ctx, cache, progress)
	if err != nil {
		return bench.Env{}, err
	}
	if len(o.deployN) > 0 || len(o.deployStuck) > 0 || o.charts != "" {
		if bins.Workloads, err = cluster.BuildWorkloads(ctx, cache, progress); err != nil {
			return bench.Env{}, err
		}
	}
	return bench.Env{
		Binary: bin, ControlPlane: bins, Dir: dir, Workers: o.workers,
		GroupSize: o.groupSize, Chains: o.chains, Samples: o.samples, DriftSamples: o.driftSamples, Workload: o.workload, Watched: o.watched,
		BurstRate: o.burst, BurstFor: o.burstFor, OperatorArgs: o.operatorArgs, Progress: progress, CPUProfile: o.cpuProfile,
	}, nil
}

// measure runs every size and the sweep, and returns the report of what
// finished, also on error.
func (o options) measure(ctx context.Context, env bench.Env) (string, error) {
	var b strings.Builder
	b.WriteString(o.header())
	if o.hookRuns > 0 {
		fmt.Fprintf(env.Progress, "hook cost: %d runs each of bash+jq and Go\n", o.hookRuns)
		costs, err := bench.MeasureHookCost(ctx, env.Dir, o.hookRuns)
		if err != nil {
			return b.String(), err
		}
		b.WriteString("One hook run through the operator's executor (files, fork/exec, the hook's work, outputs):\n\n")
		b.WriteString(bench.HookCostMarkdown(costs))
		b.WriteString("\n")
	}
	if err := o.measureDeployments(ctx, env, &b); err != nil {
		return b.String(), err
	}
	var results []bench.Result
	var err error
	for _, n := range o.sizes {
		var r bench.Result
		if r, err = bench.Run(ctx, env, n, o.workers); err != nil {
			err = fmt.Errorf("run with %d modules: %w", n, err)
			break
		}
		results = append(results, r)
	}
	writeResults(&b, results)
	if err == nil && len(o.reference) > 0 {
		err = o.measureReference(ctx, env, results, &b)
	}
	if err == nil && o.objectsN > 0 {
		var runs []bench.ObjectsRun
		runs, err = bench.CompareObjects(ctx, env, o.objectsN, o.objectsRounds)
		if len(runs) > 0 {
			fmt.Fprintf(&b, "\nModule objects, %d round(s); load average (1 min) at the end: %s\n\n", o.objectsRounds, bench.LoadAverage())
			b.WriteString(bench.ObjectsMarkdown(o.objectsN, runs))
		}
		if err != nil {
			err = fmt.Errorf("module objects comparison: %w", err)
		}
	}
	if err != nil || len(o.sweep) == 0 {
		return b.String(), err
	}
	sw, err := bench.Sweep(ctx, env, o.sweepN, o.sweep, o.rounds)
	if len(sw) > 0 {
		fmt.Fprintf(&b, "\nWorker sweep, %d round(s); load average (1 min) at its end: %s\n\n", o.rounds, bench.LoadAverage())
		b.WriteString(bench.SweepMarkdown(o.sweepN, sw))
	}
	if err != nil {
		return b.String(), fmt.Errorf("sweep: %w", err)
	}
	return b.String(), nil
}

// header says what was measured with what: the machine, the operator's
// settings and its binary when not built here.
func (o options) header() string {
	args := "none"
	if len(o.operatorArgs) > 0 {
		args = o.operatorArgs.String()
	}
	group := "N/10 (at least 10)"
	if o.groupSize > 0 {
		group = strconv.Itoa(o.groupSize)
	}
	s := fmt.Sprintf("Machine: %d CPUs (%s/%s), %s; module workers %d; modules per order prefix: %s; hooks: %s (%s; locale: %s); extra operator args: %s.\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), o.workers, group, o.workload.Hooks, o.jqVersion, o.locale, args)
	if o.chains > 0 {
		s += fmt.Sprintf("Modules form %d module.yaml dependency chains instead of order groups.\n\n", o.chains)
	}
	if o.operator != "" {
		s += fmt.Sprintf("Operator binary: %s.\n\n", o.operator)
	}
	return s
}

// writeResults writes the results table and the time breakdown.
func writeResults(b *strings.Builder, results []bench.Result) {
	if len(results) == 0 {
		return
	}
	b.WriteString(bench.Markdown(results))
	b.WriteString("\nLoad average (1 min) at the start and end of each run:")
	for i := range results {
		fmt.Fprintf(b, " N=%d: %s .. %s;", results[i].N, results[i].LoadBefore, results[i].LoadAfter)
	}
	b.WriteString("\n\nWhere the time goes, from the operator's debug log; API requests from its /metrics" +
		" (counted from the operator's start; reactions from just before the change until the module run is done):\n\n")
	b.WriteString(bench.PhasesMarkdown(results))
	b.WriteString("\n")
	b.WriteString(bench.APIMarkdown(results))
	if md := bench.BurstMarkdown(results); md != "" {
		b.WriteString("\nA burst of watch events (merge patches of 100 watched ConfigMaps, round robin), the queues sampled every second:\n\n")
		b.WriteString(md)
	}
	if md := bench.WatchedMarkdown(results); md != "" {
		b.WriteString("\nThe operator's live heap (after a forced GC) with many objects watched by one kubernetes binding" +
			" (filter results only, as the bench's hooks keep):\n\n")
		b.WriteString(md)
	}
}

// referenceBinary builds the established addon-operator once and returns its
// binary.
func (o options) referenceBinary(ctx context.Context, env bench.Env) (string, error) {
	if *o.refBin != "" {
		return *o.refBin, nil
	}
	fmt.Fprintln(env.Progress, "building the reference addon-operator v1.5.0")
	bin, err := bench.BuildReference(ctx, env.Dir)
	if err != nil {
		return "", err
	}
	*o.refBin = bin
	return bin, nil
}

// measureDeployments runs the Deployment converges of -deploy-n and
// -deploy-stuck and the charts of -charts, and writes their tables.
func (o options) measureDeployments(ctx context.Context, env bench.Env, b *strings.Builder) error {
	var runs []bench.DeployResult
	var err error
	for _, n := range o.deployN {
		for _, delay := range o.deployDelays {
			ref := ""
			if slices.Contains(o.deployRef, n) {
				if ref, err = o.referenceBinary(ctx, env); err != nil {
					break
				}
			}
			var r bench.DeployResult
			if r, err = bench.DeployConverge(ctx, env, n, delay, ref); err != nil {
				err = fmt.Errorf("deployment converge, N=%d, delay %s: %w", n, delay, err)
				break
			}
			runs = append(runs, r)
		}
		if err != nil {
			break
		}
	}
	var stuck []bench.StuckResult
	for _, n := range o.deployStuck {
		for _, delay := range o.deployDelays {
			if err != nil {
				break
			}
			var r bench.StuckResult
			if r, err = bench.DeployStuck(ctx, env, n, delay); err != nil {
				err = fmt.Errorf("deployment converge with a module never ready, N=%d, delay %s: %w", n, delay, err)
				break
			}
			stuck = append(stuck, r)
		}
	}
	if len(stuck) > 0 {
		b.WriteString("The same modules, ours only, without and with the first module's Pod never started (its Deployment never available)," +
			" both at the same time on control planes of their own: when every other module's first run (its readiness wait included)" +
			" was done, and their Deployments available:\n\n")
		b.WriteString(bench.StuckMarkdown(stuck))
		b.WriteString("\n")
	}
	if len(runs) > 0 {
		b.WriteString("Modules whose charts hold a ConfigMap, a Service, a ServiceAccount and a Deployment of one replica" +
			" (its Pod started by a simulated node after the delay), each operator on a control plane of its own" +
			" with the controllers, the scheduler and simulated nodes:\n\n")
		b.WriteString(bench.DeployMarkdown(runs))
		b.WriteString("\n")
	}
	if err != nil || o.charts == "" {
		return err
	}
	ref := ""
	if o.chartsRef {
		if ref, err = o.referenceBinary(ctx, env); err != nil {
			return err
		}
	}
	c, err := bench.ChartsConverge(ctx, env, o.charts, bench.CorpusCharts(), o.chartsDelay, ref)
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	b.WriteString("Published charts as modules, all of one order (see bench.CorpusCharts for their values):\n\n")
	b.WriteString(bench.ChartsMarkdown(c))
	b.WriteString("\n")
	return nil
}

// measureReference builds the established addon-operator and runs it on
// each size of -reference, and writes its figures next to ours.
func (o options) measureReference(ctx context.Context, env bench.Env, ours []bench.Result, b *strings.Builder) error {
	bin, err := o.referenceBinary(ctx, env)
	if err != nil {
		return err
	}
	var ref []bench.ReferenceResult
	for _, n := range o.reference {
		r, rerr := bench.RunReference(ctx, env, bin, n)
		if rerr != nil {
			err = fmt.Errorf("reference with %d modules: %w", n, rerr)
			break
		}
		ref = append(ref, r)
	}
	if len(ref) > 0 {
		b.WriteString("\nThe established addon-operator v1.5.0 on the same workload, each on a control plane of its own;" +
			" its converge ends when every module's rendered ConfigMap carries the beforeHelm hook's value:\n\n")
		b.WriteString(bench.ReferenceMarkdown(ours, ref))
	}
	return err
}
