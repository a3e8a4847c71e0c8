// Package charts runs public Helm charts, unchanged, as modules: podinfo,
// metrics-server, kube-state-metrics and ingress-nginx from the corpus
// beside the repository (../shared/corpus/charts), on the local control
// plane with its controllers and simulated nodes (cluster.Workloads), so
// that their Deployments become available and their Helm hook Jobs
// complete. It checks what a chart installed by Helm gets: its own
// global: defaults, its hook Jobs awaited (and named when they do not
// finish), its objects ready, healed and uninstalled; and when a values
// change upgrades a release whose manifests render the same.
package charts

import (
	"os"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// podStartDelay is how long the simulated nodes take to start a Pod.
const podStartDelay = time.Second

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
)

func TestMain(m *testing.M) {
	os.Exit(operatortest.TestMainWith(m, &cp, &bin, cluster.TestOptions{
		Workloads: &cluster.Workloads{PodStartDelay: podStartDelay},
	}))
}
