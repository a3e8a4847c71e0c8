// Package server tests the operator's HTTP side end to end: the server on
// real listeners, its status page in a real browser (headless Chromium),
// the render diff against the local control plane, and the real binary's
// listeners with and without Kubernetes authentication and authorization.
package server

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
