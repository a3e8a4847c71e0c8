// Package outage stops the local control plane's kube-apiserver (and etcd)
// under a running addon-operator, in the middle of a converge, and proves
// that the operator says so (log, metrics, /readyz, status page), keeps the
// Events it records meanwhile, and retries what failed within seconds of
// the API server's return rather than after its backoff. It has a control
// plane of its own: its tests stop it.
package outage

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

// With etcd down, the API server fails a request only at its request
// timeout: 60 s by default, shortened here so the etcd test takes seconds.
func TestMain(m *testing.M) { os.Exit(operatortest.TestMain(m, &cp, &bin, "--request-timeout=5s")) }
