// Package kube proves pkg/kube against the local control plane: monitors
// (selectors, events, jq filters, snapshots, memory) and the object patcher.
package kube

import (
	"os"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }
