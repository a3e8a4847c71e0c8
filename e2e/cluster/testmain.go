package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestMain builds and starts one control plane for a test binary, stores it
// in *cp for the tests, runs them and stops the control plane, also when the
// binary is interrupted. Use it as:
//
//	var cp *cluster.ControlPlane
//	func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }
//
// apiServerArgs are more kube-apiserver flags (Options.APIServerArgs).
func TestMain(m *testing.M, cp **ControlPlane, apiServerArgs ...string) int {
	return TestMainWith(m, cp, TestOptions{APIServerArgs: apiServerArgs})
}

// TestOptions configure the control plane of TestMainWith.
type TestOptions struct {
	// APIServerArgs are more kube-apiserver flags (Options.APIServerArgs).
	APIServerArgs []string
	// Workloads, when set, also builds and runs the controllers, the
	// scheduler and simulated nodes (Options.Workloads). A package that
	// needs Deployments to become available, Jobs to complete or
	// namespaces to finish deleting asks for them; the others start faster
	// without.
	Workloads *Workloads
}

// TestMainWith is TestMain with the control plane configured by opts.
func TestMainWith(m *testing.M, cp **ControlPlane, opts TestOptions) int {
	started, err := startForTests(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "local control plane: %v\n", err)
		return 1
	}
	// An interrupt stops the servers before the binary dies; Pdeathsig covers
	// harder kills.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-signals; ok {
			_ = started.Stop()
			_ = os.RemoveAll(started.Dir)
			os.Exit(130)
		}
	}()
	*cp = started
	code := m.Run()
	signal.Stop(signals)
	close(signals)
	if err := started.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop local control plane: %v\n", err)
	}
	if code == 0 {
		_ = os.RemoveAll(started.Dir)
	} else {
		fmt.Fprintf(os.Stderr, "local control plane logs kept in %s\n", started.Dir)
	}
	return code
}

func startForTests(ctx context.Context, opts TestOptions) (*ControlPlane, error) {
	cache, err := DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	bins, err := Build(ctx, cache, os.Stderr)
	if err != nil {
		return nil, err
	}
	if opts.Workloads != nil {
		if bins.Workloads, err = BuildWorkloads(ctx, cache, os.Stderr); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "addon-operator-cp-")
	if err != nil {
		return nil, fmt.Errorf("create control-plane dir: %w", err)
	}
	cp, err := Start(ctx, Options{
		Binaries: bins, Dir: dir, Log: io.Discard,
		APIServerArgs: opts.APIServerArgs, Workloads: opts.Workloads,
	})
	if err != nil {
		return nil, err
	}
	return cp, nil
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace of its own for the test t, named after it.
// Namespaces are not deleted: without the controllers (Options.Workloads)
// they would stay Terminating, and the whole control plane is thrown away
// after the run.
func (cp *ControlPlane) Namespace(tb testing.TB) string {
	tb.Helper()
	name := unsafeNameChars.ReplaceAllString(strings.ToLower(tb.Name()), "-")
	if len(name) > 40 {
		name = name[:40]
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name = strings.Trim(name, "-") + "-" + hex.EncodeToString(suffix)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cp.Clientset(tb).CoreV1().Namespaces().Create(tb.Context(), ns, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// Clientset returns a typed client for the control plane.
func (cp *ControlPlane) Clientset(tb testing.TB) kubernetes.Interface {
	tb.Helper()
	c, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		tb.Fatalf("client for local control plane: %v", err)
	}
	return c
}
