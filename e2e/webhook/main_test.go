// Package webhook tests the operator's admission and conversion webhooks
// end to end: the local kube-apiserver calls the operator's HTTPS server
// at https://127.0.0.1:<port>, which runs the fixture modules' hooks.
package webhook

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
