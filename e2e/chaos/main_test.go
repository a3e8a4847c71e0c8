// Package chaos kills the addon-operator binary with SIGKILL in the middle
// of Helm installs and upgrades, restarts it, and proves that the restart
// alone converges: every release deployed, none pending, no object left
// behind or doubled. Run it with -chaos.seed=N to replay a failing kill
// schedule (the random choices replay; the machine's timing does not).
package chaos

import (
	"flag"
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain

	seedFlag       = flag.Uint64("chaos.seed", 0, "seed of the kill schedule; 0 picks one and logs it") //nolint:gochecknoglobals // a test flag
	iterationsFlag = flag.Int("chaos.iterations", 21, "kill-and-restart iterations")                    //nolint:gochecknoglobals // a test flag
)

func TestMain(m *testing.M) { os.Exit(operatortest.TestMain(m, &cp, &bin)) }
