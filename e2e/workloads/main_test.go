// Package workloads tests the local control plane with its controllers,
// scheduler and simulated nodes (cluster.Workloads) against real
// controllers: Deployments become available after the pod start delay,
// Jobs complete or fail, namespaces finish deleting, the garbage collector
// deletes dependents; and, through the operator, a module whose chart has a
// Deployment becomes Ready and chart hook Jobs decide an install.
package workloads

import (
	"os"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// podStartDelay is how long the simulated nodes take to start a Pod.
const podStartDelay = 2 * time.Second

var (
	cp  *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests
	bin string                //nolint:gochecknoglobals // the binary under test, built once by TestMain
)

func TestMain(m *testing.M) {
	os.Exit(operatortest.TestMainWith(m, &cp, &bin, cluster.TestOptions{
		Workloads: &cluster.Workloads{PodStartDelay: podStartDelay},
	}))
}
