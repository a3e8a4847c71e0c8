// Package cli tests the command line against the local control plane: the
// diff of a module tree with what the operator deployed.
package cli

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary TestMain built
)

func TestMain(m *testing.M) { os.Exit(operatortest.TestMain(m, &cp, &bin)) }
