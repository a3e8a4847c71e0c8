// Package graph tests module.yaml end to end against the local control
// plane: releases in their own namespaces, modules that wait for what
// they require to be ready, readiness computed by kstatus from objects'
// status (which the tests set, as there are no controllers), and
// disabling in reverse order.
package graph

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
