// Command localcluster builds, starts and stops a local control plane for a
// developer's shell and for make: `localcluster build` builds (or finds in
// the cache) etcd and kube-apiserver, `localcluster up DIR` starts them and
// prints the export line for their kubeconfig, `localcluster down DIR` stops
// them and removes DIR.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

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
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "build":
		_, err = build(ctx)
	case len(os.Args) == 3 && os.Args[1] == "up":
		err = up(ctx, os.Args[2])
	case len(os.Args) == 3 && os.Args[1] == "down":
		err = down(os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "usage: localcluster build | up DIR | down DIR")
		return 2
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster %s: %v\n", os.Args[1], err)
		return 1
	}
	return 0
}

func build(ctx context.Context) (cluster.Binaries, error) {
	cache, err := cluster.DefaultCacheDir()
	if err != nil {
		return cluster.Binaries{}, err
	}
	return cluster.Build(ctx, cache, os.Stderr)
}

func up(ctx context.Context, dir string) error {
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
	bins, err := build(ctx)
	if err != nil {
		return err
	}
	cp, err := cluster.Start(ctx, cluster.Options{Binaries: bins, Dir: dir, Detach: true, Log: os.Stderr})
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
	fmt.Fprintf(os.Stderr, "kube-apiserver %s ready with namespace %s; logs in %s\n", cp.Version, defaultNamespace, dir)
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
