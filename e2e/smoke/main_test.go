// Package smoke proves, against the local control plane, the parts of
// client-go and Helm that the operator is built on.
package smoke

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }
