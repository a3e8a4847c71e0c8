// Package modulesdk tests, end to end, modules whose hooks are a batch
// binary built as the module SDK builds them: its settings check at
// admission, its readiness probe on a lane of its own, and a binary above
// Helm's file size limit in hooks/ beside a chart.
package modulesdk

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
