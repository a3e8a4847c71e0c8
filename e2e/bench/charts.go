package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ChartModule is a published chart deployed as a module. The module is a
// wrapper chart whose only subchart is the published one, copied unchanged
// into the generated tree, under the module's key as alias: the operators
// give a chart the values {global: ..., <moduleKey>: ...}, and Helm hands
// the <moduleKey> section to the subchart of that alias as its own values.
type ChartModule struct {
	// Chart is the chart's directory in the corpus.
	Chart string
	// Name is the module's name (kebab-case), Key its values key.
	Name, Key string
	// Values are the chart's values (YAML, indented by two spaces under
	// the key): names fixed whatever the alias, and what a cluster
	// without a kubelet, a cloud or a reachable Pod needs.
	Values string
	// Deployments are the Deployments the chart creates with Values:
	// the module is ready for a user when all are available.
	Deployments []string
}

// CorpusCharts are the published charts of the corpus (its
// charts/SOURCES names their origin and version) as modules. Every chart's
// fullnameOverride and nameOverride keep its objects' names what they are
// without the alias (a camelCase alias is no valid object name). Beyond
// that:
//   - metrics-server: no APIService. Its Pod serves nothing here, so an
//     APIService pointing at it would make discovery of metrics.k8s.io
//     fail for every client of the API server.
//   - ingress-nginx: no admission webhook (its certificate Jobs run
//     nothing here, so the webhook would have no certificate and would
//     refuse every Ingress) and a ClusterIP Service (no cloud gives a
//     LoadBalancer an address, so the Service would never be ready).
func CorpusCharts() []ChartModule {
	return []ChartModule{
		{Chart: "podinfo", Name: "podinfo", Key: "podinfo",
			Values:      "  fullnameOverride: podinfo\n  nameOverride: podinfo\n",
			Deployments: []string{"podinfo"}},
		{Chart: "kube-state-metrics", Name: "kube-state-metrics", Key: "kubeStateMetrics",
			Values:      "  fullnameOverride: kube-state-metrics\n  nameOverride: kube-state-metrics\n",
			Deployments: []string{"kube-state-metrics"}},
		{Chart: "metrics-server", Name: "metrics-server", Key: "metricsServer",
			Values:      "  fullnameOverride: metrics-server\n  nameOverride: metrics-server\n  apiService:\n    create: false\n",
			Deployments: []string{"metrics-server"}},
		{Chart: "ingress-nginx", Name: "ingress-nginx", Key: "ingressNginx",
			Values: "  fullnameOverride: ingress-nginx\n  nameOverride: ingress-nginx\n" +
				"  controller:\n    service:\n      type: ClusterIP\n    admissionWebhooks:\n      enabled: false\n",
			Deployments: []string{"ingress-nginx-controller"}},
	}
}

// ChartLayout is a generated tree of chart modules.
type ChartLayout struct {
	Layout
	// Deployments are those of every module.
	Deployments []string
}

// GenerateCharts writes the charts of mods, read from corpus (the
// corpus's charts directory), as modules into dir/modules, all of one
// order (they run in parallel), a modules/values.yaml enabling them and
// an empty dir/global-hooks.
func GenerateCharts(dir, corpus string, mods []ChartModule) (ChartLayout, error) {
	l := ChartLayout{Layout: Layout{ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks")}}
	if err := os.MkdirAll(l.GlobalHooksDir, 0o750); err != nil {
		return ChartLayout{}, fmt.Errorf("create global hooks dir: %w", err)
	}
	var enabled strings.Builder
	for _, m := range mods {
		if err := writeChartModule(filepath.Join(l.ModulesDir, "010-"+m.Name), corpus, m); err != nil {
			return ChartLayout{}, err
		}
		fmt.Fprintf(&enabled, "%sEnabled: true\n", m.Key)
		l.Keys = append(l.Keys, m.Key)
		l.Deployments = append(l.Deployments, m.Deployments...)
	}
	if err := writeFile(filepath.Join(l.ModulesDir, "values.yaml"), enabled.String(), 0o644); err != nil {
		return ChartLayout{}, err
	}
	return l, nil
}

// writeChartModule writes the wrapper chart of m into dir, with the
// published chart copied into its charts/.
func writeChartModule(dir, corpus string, m ChartModule) error {
	src := filepath.Join(corpus, m.Chart)
	version, err := chartVersion(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o750); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.CopyFS(filepath.Join(dir, "charts", m.Chart), os.DirFS(src)); err != nil {
		return fmt.Errorf("copy chart %s: %w", src, err)
	}
	chart := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\ndependencies:\n- name: %s\n  version: %q\n  alias: %s\n",
		m.Name, m.Chart, version, m.Key)
	if err := writeFile(filepath.Join(dir, "Chart.yaml"), chart, 0o644); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "values.yaml"), m.Key+":\n"+m.Values, 0o644)
}

// chartVersion reads the version of the chart in dir from its Chart.yaml.
func chartVersion(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", fmt.Errorf("read chart: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "version:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`), nil
		}
	}
	return "", fmt.Errorf("%s/Chart.yaml: no version", dir)
}
