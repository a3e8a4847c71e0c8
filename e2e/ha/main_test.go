// Package ha tests leader election between replicas of the addon-operator
// binary against the local control plane: exactly one replica works, a
// standby takes over when the leader dies, stops or loses its Lease.
package ha

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "addon-operator-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "addon-operator")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", bin, "github.com/addon-operator/addon-operator/cmd/addon-operator")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build addon-operator: %v\n", err)
		os.Exit(1)
	}
	code := cluster.TestMain(m, &cp)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
