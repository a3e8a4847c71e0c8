package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// referencePoll is how often the reference's progress is read.
const referencePoll = 250 * time.Millisecond

// referencePerModule is what the reference's converge may take per module
// beyond convergeTimeout: it ran a module in about 0.8 s at N=100, one
// after another, so N=1000 needs more than convergeTimeout alone.
const referencePerModule = 2 * time.Second

// BuildReference builds the established addon-operator v1.5.0 from the
// module in e2e/bench/reference into dir (see referenceBuild).
func BuildReference(ctx context.Context, dir string) (string, error) {
	return buildReferenceModule(ctx, dir, "addon-operator-reference", "github.com/flant/addon-operator/cmd/addon-operator", "the reference addon-operator v1.5.0")
}

// ReferenceResult is the first converge of the reference on the workload
// of Run, on a control plane of its own.
type ReferenceResult struct {
	N int
	// Wall is from process start until every module's rendered ConfigMap
	// carries the beforeHelm hook's value: the releases are installed.
	Wall                  time.Duration
	OperatorCPU, HooksCPU time.Duration
	// PeakRSS is the reference's VmHWM then.
	PeakRSS int64
	// Watched is its heap with Env.Watched objects watched by one
	// module's binding, measured after the converge as for ours; nil when
	// not measured. WatchedErr says why it has no figure when it failed.
	Watched    *Watched
	WatchedErr string
}

// RunReference measures the reference binary bin on n generated modules.
func RunReference(ctx context.Context, env Env, bin string, n int) (res ReferenceResult, err error) {
	res.N = n
	dir := filepath.Join(env.Dir, "reference-n"+strconv.Itoa(n))
	layout, err := Generate(dir, n, env.groupSize(n), env.Workload)
	if err != nil {
		return res, err
	}
	cp, client, err := env.startCluster(ctx, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stopCluster(cp)) }()
	ns := "bench-reference-n" + strconv.Itoa(n)
	if err := createNamespace(ctx, client, ns); err != nil {
		return res, err
	}
	env.progressf("reference N=%d: starting addon-operator v1.5.0", n)
	stop, pid, port, started, err := startReference(ctx, bin, dir, cp.Kubeconfig, ns, layout)
	if err != nil {
		return res, err
	}
	defer stop()
	if err := waitRendered(ctx, client, ns, layout.Keys); err != nil {
		return res, fmt.Errorf("reference N=%d (log %s): %w", n, filepath.Join(dir, "reference.log"), err)
	}
	res.Wall = time.Since(started)
	cpu, err := readCPU(pid)
	if err != nil {
		return res, err
	}
	hz := clockTicks(ctx)
	res.OperatorCPU, res.HooksCPU = cpuDuration(cpu.self, hz), cpuDuration(cpu.children, hz)
	if res.PeakRSS, err = peakRSS(pid); err != nil {
		return res, err
	}
	env.progressf("reference N=%d: converged in %s", n, res.Wall.Round(time.Millisecond))
	if env.Watched > 0 {
		env.progressf("reference N=%d: creating %d objects watched by module %s", n, env.Watched, layout.Keys[0])
		w, werr := measureWatched(ctx, client, ns, layout.Keys[0], env.Watched, referenceHeap("http://"+net.JoinHostPort("127.0.0.1", port)))
		if werr != nil {
			// The converge's figures stand; this one is reported missing.
			res.WatchedErr = werr.Error()
			env.progressf("reference N=%d: watched objects: %v", n, werr)
		} else {
			res.Watched = &w
			env.progressf("reference N=%d: %d watched objects: live heap %s -> %s", n, w.Objects, formatMB(w.HeapBefore), formatMB(w.HeapAfter))
		}
	}
	return res, nil
}

// startReference starts the reference in dir and returns how to stop it.
func startReference(ctx context.Context, bin, dir, kubeconfig, ns string, layout Layout) (stop func(), pid int, metricsPort string, started time.Time, err error) {
	ports, err := freePorts(ctx, 2)
	if err != nil {
		return nil, 0, "", time.Time{}, err
	}
	logFile, err := os.Create(filepath.Join(dir, "reference.log"))
	if err != nil {
		return nil, 0, "", time.Time{}, fmt.Errorf("create reference log: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(runCtx, bin, "start", "--namespace="+ns,
		"--modules-dir="+layout.ModulesDir, "--global-hooks-dir="+layout.GlobalHooksDir, "--tmp-dir="+filepath.Join(dir, "tmp"),
		"--prometheus-listen-address=127.0.0.1", "--prometheus-listen-port="+ports[0], "--admission-server-listen-port="+ports[1])
	// KUBE_CONFIG for the operator's own clients, KUBECONFIG for its Helm.
	cmd.Env = append(os.Environ(), "KUBE_CONFIG="+kubeconfig, "KUBECONFIG="+kubeconfig, EnvNamespace+"="+ns)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logFile.Close()
		return nil, 0, "", time.Time{}, fmt.Errorf("start the reference: %w", err)
	}
	stop = func() {
		cancel()
		_ = cmd.Wait()
		_ = logFile.Close()
	}
	return stop, cmd.Process.Pid, ports[0], started, nil
}

// waitRendered polls until every module's rendered ConfigMap carries the
// beforeHelm hook's value for the initial config, for at most
// convergeTimeout and referencePerModule a module.
func waitRendered(ctx context.Context, client kubernetes.Interface, ns string, keys []string) error {
	ctx, cancel := context.WithTimeout(ctx, convergeTimeout+time.Duration(len(keys))*referencePerModule)
	defer cancel()
	tick := time.NewTicker(referencePoll)
	defer tick.Stop()
	for {
		list, err := client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			done := map[string]bool{}
			for i := range list.Items {
				if list.Items[i].Data[KeyFromHook] == "hook-initial" {
					done[list.Items[i].Name] = true
				}
			}
			missing := 0
			for _, k := range keys {
				if !done[k] {
					missing++
				}
			}
			if missing == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for every module's release: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// freePorts returns n free loopback ports.
func freePorts(ctx context.Context, n int) ([]string, error) {
	var ports []string
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		lns = append(lns, ln)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		ports = append(ports, port)
	}
	return ports, nil
}

// ReferenceMarkdown puts the reference's first converges next to ours.
func ReferenceMarkdown(ours []Result, ref []ReferenceResult) string {
	var b strings.Builder
	b.WriteString("| N | start to converged: ours | reference v1.5.0 | reference / ours | CPU (operator + hooks): ours | reference |" +
		" peak RSS: ours | reference |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range ref {
		var o *Converge
		for i := range ours {
			if ours[i].N == r.N {
				o = &ours[i].Converge
			}
		}
		if o == nil {
			fmt.Fprintf(&b, "| %d | | %s | | | %s | | %s |\n", r.N, formatDuration(r.Wall), formatDuration(r.OperatorCPU+r.HooksCPU), formatMB(r.PeakRSS))
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %.1fx | %s | %s | %s | %s |\n", r.N, formatDuration(o.Wall), formatDuration(r.Wall),
			float64(r.Wall)/float64(o.Wall), formatDuration(o.OperatorCPU+o.HooksCPU), formatDuration(r.OperatorCPU+r.HooksCPU),
			formatMB(o.PeakRSS), formatMB(r.PeakRSS))
	}
	for _, r := range ref {
		var o *Watched
		for i := range ours {
			if ours[i].N == r.N {
				o = ours[i].Watched
			}
		}
		switch {
		case r.Watched != nil:
			fmt.Fprintf(&b, "\nN=%d, %d objects watched by one binding, live heap difference: reference %s (%s -> %s, listed after %s)",
				r.N, r.Watched.Objects, formatMB(r.Watched.HeapAfter-r.Watched.HeapBefore), formatMB(r.Watched.HeapBefore), formatMB(r.Watched.HeapAfter), formatDuration(r.Watched.Wall))
			if o != nil {
				fmt.Fprintf(&b, ", ours %s (listed after %s)", formatMB(o.HeapAfter-o.HeapBefore), formatDuration(o.Wall))
			}
			b.WriteString(".\n")
		case r.WatchedErr != "":
			fmt.Fprintf(&b, "\nN=%d, watched objects on the reference: no figure (%s).\n", r.N, r.WatchedErr)
		}
	}
	return b.String()
}
