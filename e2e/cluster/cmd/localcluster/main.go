// Command localcluster builds, starts and stops a local control plane for a
// developer's shell and for make: `localcluster build` builds (or finds in
// the cache) etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// kwok and kubectl; `localcluster kubectl` builds kubectl alone and prints
// its path; `localcluster up DIR` starts them, registers simulated nodes and
// prints the export line for their kubeconfig, with the operator's
// namespace and the addon-operator.io CRDs created; `localcluster down DIR` stops
// them and removes DIR. `up -workloads=false` starts etcd and the API server
// only; `up -pod-start-delay 2s` sets how long Pods take to become ready.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

func main() { os.Exit(run()) }

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	const usage = "usage: localcluster build | kubectl | up [-workloads=false] [-pod-start-delay D] [-nodes N] DIR | down DIR"
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "build":
		if _, err = build(ctx, true); err == nil {
			_, err = kubectl(ctx)
		}
	case len(os.Args) == 2 && os.Args[1] == "kubectl":
		var path string
		if path, err = kubectl(ctx); err == nil {
			fmt.Println(path)
		}
	case len(os.Args) >= 3 && os.Args[1] == "up":
		var opts upOptions
		fs := flag.NewFlagSet("up", flag.ContinueOnError)
		fs.BoolVar(&opts.workloads, "workloads", true, "also run the controllers, the scheduler and simulated nodes (kwok)")
		fs.DurationVar(&opts.w.PodStartDelay, "pod-start-delay", time.Second, "how long a scheduled Pod takes to become Running and Ready")
		fs.IntVar(&opts.w.Nodes, "nodes", 1, "how many simulated nodes to register")
		if fs.Parse(os.Args[2:]) != nil || fs.NArg() != 1 {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		err = up(ctx, fs.Arg(0), opts)
	case len(os.Args) == 3 && os.Args[1] == "down":
		err = down(os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster %s: %v\n", os.Args[1], err)
		return 1
	}
	return 0
}

// build builds (or finds in the cache) the control plane, and the
// workloads' binaries when asked.
func build(ctx context.Context, workloads bool) (cluster.Binaries, error) {
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		return cluster.Binaries{}, err
	}
	bins, err := cluster.Build(ctx, cache, os.Stderr)
	if err != nil || !workloads {
		return bins, err
	}
	bins.Workloads, err = cluster.BuildWorkloads(ctx, cache, os.Stderr)
	return bins, err
}

// kubectl builds (or finds in the cache) kubectl and returns its path.
func kubectl(ctx context.Context) (string, error) {
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	return cluster.BuildKubectl(ctx, cache, os.Stderr)
}

// upOptions are the flags of up.
type upOptions struct {
	workloads bool
	w         cluster.Workloads
}

func up(ctx context.Context, dir string, opts upOptions) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	pidFile := filepath.Join(dir, "pids")
	if pids, err := readPids(pidFile); err == nil && alive(pids) {
		fmt.Fprintf(os.Stderr, "already running (pids %v)\n", pids)
		fmt.Printf("export KUBECONFIG=%s\n", filepath.Join(dir, "kubeconfig"))
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	bins, err := build(ctx, opts.workloads)
	if err != nil {
		return err
	}
	start := cluster.Options{Binaries: bins, Dir: dir, Detach: true, Log: os.Stderr}
	if opts.workloads {
		start.Workloads = &opts.w
	}
	cp, err := cluster.Start(ctx, start)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, pid := range cp.Pids() {
		fmt.Fprintln(&b, pid)
	}
	if err := os.WriteFile(pidFile, []byte(b.String()), 0o600); err != nil {
		return errors.Join(err, cp.Stop())
	}
	if err := createNamespace(ctx, cp, defaultNamespace); err != nil {
		return errors.Join(err, cp.Stop())
	}
	if err := installCRDs(ctx, cp.Config); err != nil {
		return errors.Join(err, cp.Stop())
	}
	if opts.workloads {
		fmt.Fprintf(os.Stderr, "controllers, scheduler and %d simulated node(s) ready; Pods become ready %s after they are scheduled\n",
			max(opts.w.Nodes, 1), opts.w.PodStartDelay)
	}
	fmt.Fprintf(os.Stderr, "kube-apiserver %s ready with namespace %s and the addon-operator.io CRDs; logs in %s\n", cp.Version, defaultNamespace, dir)
	fmt.Printf("export KUBECONFIG=%s\n", cp.Kubeconfig)
	return nil
}

// defaultNamespace is created by up so that `make run` has the operator's
// namespace ready.
const defaultNamespace = "addon-operator"

func createNamespace(ctx context.Context, cp *cluster.ControlPlane, name string) error {
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

func down(dir string) error {
	pids, err := readPids(filepath.Join(dir, "pids"))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(os.Stderr, "no local control plane running")
		return nil
	}
	if err != nil {
		return err
	}
	if err := cluster.StopPids(pids); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "stopped pids %v\n", pids)
	return os.RemoveAll(dir)
}

func readPids(path string) ([]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: bad pid %q", path, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

func alive(pids []int) bool {
	for _, pid := range pids {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
	}
	return len(pids) > 0
}
