// Package operatortest runs the addon-operator binary against the local
// control plane for end-to-end tests: it builds the binary once per test
// binary, starts and stops it in a test's namespace, records its JSON log,
// reads its signals (/readyz, /metrics, the debug API's module states) and
// what the operator manages there. Tests wait on the signals; they read
// the log where a log line itself is what they check.
//
// A test package builds the binary and starts the control plane in
// TestMain; each test makes a Harness and starts the operator from it:
//
//	var (
//		cp  *cluster.ControlPlane
//		bin string
//	)
//
//	func TestMain(m *testing.M) { os.Exit(operatortest.TestMain(m, &cp, &bin)) }
//
//	func TestX(t *testing.T) {
//		h := operatortest.New(t, cp, bin)
//		h.SetConfig(map[string]string{"alphaEnabled": "true"})
//		h.Start(operatortest.Options{ModulesDir: ..., GlobalHooksDir: ...})
//		h.WaitReady()
//	}
package operatortest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// TestMain builds the addon-operator binary into a temporary directory,
// stores its path in *bin, then runs the tests as cluster.TestMain does, with
// one control plane stored in *cp, its API server given apiServerArgs. It
// returns the exit code for os.Exit.
func TestMain(m *testing.M, cp **cluster.ControlPlane, bin *string, apiServerArgs ...string) int {
	return TestMainWith(m, cp, bin, cluster.TestOptions{APIServerArgs: apiServerArgs})
}

// TestMainWith is TestMain with the control plane configured by opts, as
// cluster.TestMainWith configures it: with Workloads set, Deployments
// become available and Jobs complete.
func TestMainWith(m *testing.M, cp **cluster.ControlPlane, bin *string, opts cluster.TestOptions) int {
	dir, err := os.MkdirTemp("", "addon-operator-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	*bin = filepath.Join(dir, "addon-operator")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", *bin, "github.com/addon-operator/addon-operator/cmd/addon-operator")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build addon-operator: %v\n", err)
		return 1
	}
	return cluster.TestMainWith(m, cp, opts)
}
