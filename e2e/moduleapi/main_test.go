// Package moduleapi tests the addon-operator.io API end to end against the
// local control plane: Module objects (phases, conditions, columns, Events,
// pruning), ModuleConfig objects as the configuration source, and the
// migration from the ConfigMap.
package moduleapi

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
)

func TestMain(m *testing.M) { os.Exit(operatortest.TestMain(m, &cp, &bin)) }
