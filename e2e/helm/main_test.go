// Package helm proves pkg/helm against the local control plane: render
// with the cluster's capabilities, install, skip, upgrade, heal, chart
// hooks, ownership, pending recovery and uninstall, and the requests a
// module's install, upgrade and uninstall send.
package helm

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/pkg/helm"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }

// moduleDir is the test module: a chart without Chart.yaml, with crds/,
// hooks/ and openapi/ next to it.
const moduleDir = "testdata/modules/010-echo"

// waitTimeout bounds polling for the API server to reflect a change.
const waitTimeout = 30 * time.Second

// newClient returns a Client for the test's own namespace.
func newClient(t *testing.T, ns string) *helm.Client {
	t.Helper()
	c, err := helm.New(helm.Options{
		RESTConfig: cp.Config,
		Namespace:  ns,
		Timeout:    time.Minute,
		Logger:     slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("new helm client: %v", err)
	}
	return c
}

// echo is the test module's release with the given greeting.
func echo(greeting string) helm.Release {
	return helm.Release{
		Name:     "echo",
		ChartDir: moduleDir,
		Values: map[string]any{
			"global": map[string]any{},
			"echo":   map[string]any{"greeting": greeting},
		},
	}
}
