// Package deckhouse tests, end to end, modules written for Deckhouse: a
// module.yaml with Deckhouse's fields, a broken module.yaml beside good
// modules, and the CEL rules of settings schemas at admission and at load.
package deckhouse

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
