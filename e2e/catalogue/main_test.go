// Package catalogue tests the addons this repository ships (modules/ and
// global-hooks/ at its root, used in place) by running the operator binary
// with them against the local control plane and checking each addon's
// effect on the cluster.
//
// The control plane is shared by the package's tests, and some addons act
// cluster-wide: namespace-defaults is enabled only by the test about it,
// and the test that adds Nodes runs alone (it is not parallel).
package catalogue

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The shipped hooks read JSON with jq, as in the image.
	if _, err := exec.LookPath("jq"); err != nil {
		fmt.Fprintf(os.Stderr, "the shipped hooks need jq on PATH (make test installs it: hack/packages/ensure.sh): %v\n", err)
		return 1
	}
	// The Go hooks are built from modules/*/hooks-go, as make hooks and
	// the image build do.
	build := exec.CommandContext(context.Background(), "go", "run", "./hack/buildhooks")
	build.Dir = repoDir()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the modules' Go hooks: %v\n%s", err, out)
		return 1
	}
	return operatortest.TestMain(m, &cp, &bin)
}
