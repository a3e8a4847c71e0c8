// Package server tests the operator's HTTP side end to end: the server on
// real listeners, its status page in a real browser (headless Chromium),
// and the render diff against the local control plane.
package server

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }
