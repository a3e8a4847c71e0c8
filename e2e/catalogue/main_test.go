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
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp      *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin     string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
	stubDir string                //nolint:gochecknoglobals // put first in the operator's PATH by TestMain
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The runtime image has jq, test machines need not: a jq that always
	// fails, first in the hooks' PATH, keeps the hooks honest.
	var err error
	stubDir, err = os.MkdirTemp("", "addon-operator-stubs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(stubDir) }()
	stub := "#!/bin/sh\necho 'jq is not available: hooks must use POSIX tools only' >&2\nexit 127\n"
	if err := os.WriteFile(filepath.Join(stubDir, "jq"), []byte(stub), 0o700); err != nil { //nolint:gosec // an executable stub, for this user only
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return operatortest.TestMain(m, &cp, &bin)
}
