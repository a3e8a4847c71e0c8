// Package chart installs charts/addon-operator into the local control plane
// with Helm's library and checks what the API server stores: the
// ServiceAccount and its rights, the Deployment, the Service, the optional
// objects each value turns on, and that deploy/ applies and stays in sync.
package chart

import (
	"os"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

var cp *cluster.ControlPlane //nolint:gochecknoglobals // set once by TestMain, read by tests

func TestMain(m *testing.M) { os.Exit(cluster.TestMain(m, &cp)) }

const (
	// chartDir is the chart under test, from this package's directory.
	chartDir = "../../charts/addon-operator"
	// releaseName makes the chart's full name "addon-operator", as in deploy/.
	releaseName = "addon-operator"
	// helmTimeout bounds one install or upgrade; nothing waits for pods,
	// which never run without a kubelet.
	helmTimeout = time.Minute
	// waitTimeout bounds polling for the API server to reflect a change.
	waitTimeout = 30 * time.Second
)

// loadChart loads the chart under test.
func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// helmConfig returns a Helm action configuration for namespace ns with
// the secret storage driver, as helm install -n ns does.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	flags.Namespace = &ns
	cacheDir := t.TempDir() // not ~/.kube/cache: discovery must see CRDs created by the tests
	flags.CacheDir = &cacheDir
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatalf("init helm for namespace %s: %v", ns, err)
	}
	return cfg
}

// install installs the chart with vals over its defaults as releaseName in
// ns and returns the release.
func install(t *testing.T, ns string, vals map[string]any) *release.Release {
	t.Helper()
	in := action.NewInstall(helmConfig(t, ns))
	in.ReleaseName = releaseName
	in.Namespace = ns
	in.Timeout = helmTimeout
	rel, err := in.RunWithContext(t.Context(), loadChart(t), vals)
	if err != nil {
		t.Fatalf("helm install with %v: %v", vals, err)
	}
	return rel
}

// upgrade upgrades releaseName in ns to the chart with vals over its
// defaults, as helm upgrade --reset-values does: without the flag, an
// upgrade given no values would keep the previous ones.
func upgrade(t *testing.T, ns string, vals map[string]any) *release.Release {
	t.Helper()
	up := action.NewUpgrade(helmConfig(t, ns))
	up.Namespace = ns
	up.ResetValues = true
	up.Timeout = helmTimeout
	rel, err := up.RunWithContext(t.Context(), releaseName, loadChart(t), vals)
	if err != nil {
		t.Fatalf("helm upgrade with %v: %v", vals, err)
	}
	return rel
}
