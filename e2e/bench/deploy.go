package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// DeploySide is one operator's start on modules whose charts hold
// Deployments, from its process start.
type DeploySide struct {
	// Converge is the operator's own end of its first converge: ours the
	// log line "first converge done"; the reference's, every module's
	// rendered ConfigMap carrying the beforeHelm hook's value (zero for
	// the chart modules, which have no such ConfigMap).
	Converge time.Duration
	// Available is until every Deployment of the modules is available
	// with all its replicas: what a user waits for.
	Available time.Duration
	// CPU is the operator's and its hooks' CPU time until both ended;
	// OperatorCPU the operator's part.
	CPU, OperatorCPU time.Duration
	// Load is the machine's 1-minute load average at the start.
	Load string
}

// DeployResult is the Deployment converge of N generated modules whose
// Pods start Delay after they are bound, ours and, when run, the
// reference's.
type DeployResult struct {
	N         int
	Delay     time.Duration
	Ours      DeploySide
	Reference *DeploySide
}

// deployWaitLimit bounds how long Deployments may take to become available
// after the operator's converge ended.
const deployWaitLimit = 5 * time.Minute

// DeployConverge measures ours, and the reference binary ref unless it is
// "", over n generated modules of the Deployment shape whose Pods start
// delay after they are bound, each operator on a control plane of its own
// with the controllers, the scheduler and simulated nodes.
func DeployConverge(ctx context.Context, env Env, n int, delay time.Duration, ref string) (DeployResult, error) {
	res := DeployResult{N: n, Delay: delay}
	w := env.Workload
	w.Deployment, w.StartDelay = true, delay
	name := fmt.Sprintf("deploy-n%d-d%s", n, delay)
	dir := filepath.Join(env.Dir, name)
	layout, err := Generate(dir, n, env.groupSize(n), w)
	if err != nil {
		return res, err
	}
	workloads := &cluster.Workloads{PodStartDelay: delay}
	env.progressf("deployments N=%d, pod start delay %s: ours", n, delay)
	res.Ours, err = env.oursSide(ctx, filepath.Join(dir, "ours"), "bench-"+name, layout, layout.Keys, workloads)
	if err != nil {
		return res, fmt.Errorf("ours: %w", err)
	}
	env.progressf("deployments N=%d, delay %s: ours converged in %s, all available in %s", n, delay,
		formatDuration(res.Ours.Converge), formatDuration(res.Ours.Available))
	if ref == "" {
		return res, nil
	}
	env.progressf("deployments N=%d, pod start delay %s: the reference", n, delay)
	r, err := env.referenceSide(ctx, ref, filepath.Join(dir, "reference"), "bench-ref-"+name, layout, layout.Keys, workloads)
	if err != nil {
		return res, fmt.Errorf("reference: %w", err)
	}
	res.Reference = &r
	env.progressf("deployments N=%d, delay %s: the reference converged in %s, all available in %s", n, delay,
		formatDuration(r.Converge), formatDuration(r.Available))
	return res, nil
}

// ChartsResult is the start of the corpus's charts as modules.
type ChartsResult struct {
	Charts []string
	// Delay is the simulated nodes' pod start delay.
	Delay     time.Duration
	Ours      DeploySide
	Reference *DeploySide
}

// ChartsConverge measures ours, and the reference binary ref unless it is
// "", over mods from the corpus's charts directory, each operator on a
// control plane of its own whose simulated nodes start a Pod delay after
// it is bound.
func ChartsConverge(ctx context.Context, env Env, corpus string, mods []ChartModule, delay time.Duration, ref string) (ChartsResult, error) {
	res := ChartsResult{Delay: delay}
	for _, m := range mods {
		res.Charts = append(res.Charts, m.Chart)
	}
	dir := filepath.Join(env.Dir, "charts")
	layout, err := GenerateCharts(dir, corpus, mods)
	if err != nil {
		return res, err
	}
	workloads := &cluster.Workloads{PodStartDelay: delay}
	env.progressf("charts %v: ours", res.Charts)
	res.Ours, err = env.oursSide(ctx, filepath.Join(dir, "ours"), "bench-charts", layout.Layout, layout.Deployments, workloads)
	if err != nil {
		return res, fmt.Errorf("charts, ours: %w", err)
	}
	env.progressf("charts: ours converged in %s, all available in %s", formatDuration(res.Ours.Converge), formatDuration(res.Ours.Available))
	if ref == "" {
		return res, nil
	}
	env.progressf("charts %v: the reference", res.Charts)
	r, err := env.referenceSide(ctx, ref, filepath.Join(dir, "reference"), "bench-ref-charts", layout.Layout, layout.Deployments, workloads)
	if err != nil {
		return res, fmt.Errorf("charts, reference: %w", err)
	}
	res.Reference = &r
	env.progressf("charts: the reference's Deployments all available in %s", formatDuration(r.Available))
	return res, nil
}

// oursSide runs our operator over layout on a control plane of its own
// in namespace ns until its first converge and until the Deployments
// named deployments are available.
func (env Env) oursSide(ctx context.Context, dir, ns string, layout Layout, deployments []string, w *cluster.Workloads) (side DeploySide, err error) {
	side.Load = LoadAverage()
	cp, client, err := env.startClusterWith(ctx, dir, w)
	if err != nil {
		return side, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	if err := createNamespace(ctx, client, ns); err != nil {
		return side, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	avail := watchAvailable(wctx, client, ns, deployments)
	o := OperatorOptions{
		Binary: env.Binary, Kubeconfig: cp.Kubeconfig, Namespace: ns, Layout: layout, Workers: env.workers(), Dir: dir, Args: env.OperatorArgs,
	}
	if env.CPUProfile != "" {
		o.CPUProfile = filepath.Join(env.CPUProfile, ns)
	}
	s, err := startConverged(ctx, client, o)
	if err != nil {
		return side, err
	}
	defer s.stop()
	if len(s.profiles) > 0 {
		env.progressf("%s: CPU profiles of the first converge: %s-*.pprof (%d of %s)", ns, o.CPUProfile, len(s.profiles), cpuProfileSlice)
	}
	side.Converge = s.first.Wall
	at, err := avail.wait(ctx)
	if err != nil {
		return side, fmt.Errorf("log %s: %w", s.op.LogPath(), err)
	}
	side.Available = at.Sub(s.op.Started)
	cpu, err := readCPU(s.op.Pid())
	if err != nil {
		return side, err
	}
	hz := clockTicks(ctx)
	side.CPU = cpuDuration(cpu.self, hz) + cpuDuration(cpu.children, hz)
	side.OperatorCPU = cpuDuration(cpu.self, hz)
	env.progressf("%s: CPU until all available: operator %s, hooks %s", ns, formatDuration(side.OperatorCPU), formatDuration(side.CPU-side.OperatorCPU))
	return side, nil
}

// referenceSide runs the reference binary bin as oursSide runs ours; its
// converge is taken as oursSide's only when the modules are generated ones
// (keys equal to the Deployments' names, each with a rendered ConfigMap).
func (env Env) referenceSide(ctx context.Context, bin, dir, ns string, layout Layout, deployments []string, w *cluster.Workloads) (side DeploySide, err error) {
	side.Load = LoadAverage()
	cp, client, err := env.startClusterWith(ctx, dir, w)
	if err != nil {
		return side, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	if err := createNamespace(ctx, client, ns); err != nil {
		return side, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	avail := watchAvailable(wctx, client, ns, deployments)
	stop, pid, _, started, err := startReference(ctx, bin, dir, cp.Kubeconfig, ns, layout)
	if err != nil {
		return side, err
	}
	defer stop()
	logPath := filepath.Join(dir, "reference.log")
	if generated(layout.Keys, deployments) {
		if err := waitRendered(ctx, client, ns, layout.Keys); err != nil {
			return side, fmt.Errorf("log %s: %w", logPath, err)
		}
		side.Converge = time.Since(started)
	}
	at, err := avail.wait(ctx)
	if err != nil {
		return side, fmt.Errorf("log %s: %w", logPath, err)
	}
	side.Available = at.Sub(started)
	cpu, err := readCPU(pid)
	if err != nil {
		return side, err
	}
	hz := clockTicks(ctx)
	side.CPU = cpuDuration(cpu.self, hz) + cpuDuration(cpu.children, hz)
	return side, nil
}

// generated reports whether the modules are the generator's: one
// Deployment named after each module key.
func generated(keys, deployments []string) bool {
	if len(keys) != len(deployments) {
		return false
	}
	for i := range keys {
		if keys[i] != deployments[i] {
			return false
		}
	}
	return true
}

// availability is a watch for Deployments to become available.
type availability struct {
	done chan struct{}
	at   time.Time
	err  error
}

// watchAvailable starts watching the Deployments of ns and records when
// every one named in names is available (see deploymentAvailable). It
// watches until then, or until ctx ends.
func watchAvailable(ctx context.Context, client kubernetes.Interface, ns string, names []string) *availability {
	a := &availability{done: make(chan struct{})}
	lw := cache.NewListWatchFromClient(client.AppsV1().RESTClient(), "deployments", ns, fields.Everything())
	track := newAvailableSet(names)
	go func() {
		defer close(a.done)
		_, err := watchtools.UntilWithSync(ctx, lw, &appsv1.Deployment{}, nil, func(ev watch.Event) (bool, error) {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				return false, nil
			}
			return track.update(d.Name, ev.Type != watch.Deleted && deploymentAvailable(d)), nil
		})
		a.at, a.err = time.Now(), err
	}()
	return a
}

// wait returns when every Deployment was available, waiting at most
// deployWaitLimit from now.
func (a *availability) wait(ctx context.Context) (time.Time, error) {
	t := time.NewTimer(deployWaitLimit)
	defer t.Stop()
	select {
	case <-a.done:
		if a.err != nil {
			return time.Time{}, fmt.Errorf("wait for the Deployments to be available: %w", a.err)
		}
		return a.at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-t.C:
		return time.Time{}, fmt.Errorf("the Deployments were not all available %s after the converge", deployWaitLimit)
	}
}

// availableSet tracks which of a set of names are available.
type availableSet struct {
	want map[string]bool
	have map[string]bool
}

func newAvailableSet(names []string) *availableSet {
	s := &availableSet{want: map[string]bool{}, have: map[string]bool{}}
	for _, n := range names {
		s.want[n] = true
	}
	return s
}

// update records whether name is available and reports whether every
// wanted name is.
func (s *availableSet) update(name string, available bool) bool {
	if s.want[name] {
		if available {
			s.have[name] = true
		} else {
			delete(s.have, name)
		}
	}
	return len(s.have) == len(s.want)
}

// deploymentAvailable reports whether the controller has seen d's current
// spec and every replica it asks for is updated and available.
func deploymentAvailable(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas >= want && st.AvailableReplicas >= want && st.Replicas == st.UpdatedReplicas
}

// workers is the --module-workers of the Deployment and chart runs.
func (env Env) workers() int {
	if env.Workers > 0 {
		return env.Workers
	}
	return defaultWorkers
}

// defaultWorkers is the operator's default --module-workers.
const defaultWorkers = 4
