// Package config_test checks pkg/config against the local control plane:
// the ConfigMap watch, its events, and writes back with conflict retry.
package config_test

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }
