package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/helm"
)

// corpusCharts is the corpus's charts directory, beside the repository.
func corpusCharts(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locate test source")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus", "charts")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the corpus's charts: %v", err)
	}
	return dir
}

type object struct {
	Kind     string
	Metadata struct{ Name string }
	Spec     struct{ Type string }
}

// The published charts, as the generator wraps them, render through the
// operator's own Helm code with the values the bench gives them: each
// Deployment the bench waits for, under its own name (not the camelCase
// alias), and none of what a cluster without a kubelet or a cloud cannot
// make ready (an APIService served by a Pod, an admission webhook, a
// LoadBalancer Service), and no chart hook that an install runs.
func TestCorpusChartsRender(t *testing.T) {
	corpus := corpusCharts(t)
	l, err := GenerateCharts(t.TempDir(), corpus, CorpusCharts())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range CorpusCharts() {
		want = append(want, m.Deployments...)
	}
	if diff := cmp.Diff(want, l.Deployments); diff != "" {
		t.Errorf("layout deployments (-want +got):\n%s", diff)
	}
	for _, m := range CorpusCharts() {
		t.Run(m.Chart, func(t *testing.T) {
			dir := filepath.Join(l.ModulesDir, "010-"+m.Name)
			vals := moduleValues(t, dir)
			vals["global"] = map[string]any{}
			r, err := helm.RenderOfflineWith(t.Context(), "bench", helm.Release{Name: m.Name, ChartDir: dir, Values: vals},
				helm.Capabilities{KubeVersion: "v1.36.3"})
			if err != nil {
				t.Fatal(err)
			}
			var deployments []string
			for doc := range strings.SplitSeq(r.Manifest, "\n---") {
				var o object
				if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
					t.Fatalf("manifest: %v", err)
				}
				switch {
				case o.Kind == "Deployment":
					deployments = append(deployments, o.Metadata.Name)
				case o.Kind == "APIService", o.Kind == "ValidatingWebhookConfiguration", o.Kind == "MutatingWebhookConfiguration":
					t.Errorf("renders %s %s", o.Kind, o.Metadata.Name)
				case o.Kind == "Service" && o.Spec.Type == "LoadBalancer":
					t.Errorf("renders LoadBalancer Service %s", o.Metadata.Name)
				}
			}
			if diff := cmp.Diff(m.Deployments, deployments); diff != "" {
				t.Errorf("rendered Deployments (-want +got):\n%s", diff)
			}
			// Helm test hooks run only with helm test, never on install.
			for _, h := range r.Hooks {
				if !strings.Contains(h, `"helm.sh/hook": test`) {
					t.Errorf("renders a chart hook run on install:\n%s", h)
				}
			}
		})
	}
}

func moduleValues(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		t.Fatal(err)
	}
	return vals
}

// The corpus is read, never written: the generated module holds a copy.
func TestGenerateChartsCopies(t *testing.T) {
	corpus := corpusCharts(t)
	mods := CorpusCharts()[:1]
	l, err := GenerateCharts(t.TempDir(), corpus, mods)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Keys, []string{"podinfo"}) {
		t.Errorf("keys %v, want [podinfo]", l.Keys)
	}
	src, err := os.ReadFile(filepath.Join(corpus, "podinfo", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.ReadFile(filepath.Join(l.ModulesDir, "010-podinfo", "charts", "podinfo", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, dst) {
		t.Error("the copied chart's values.yaml differs from the corpus's")
	}
	enabled, err := os.ReadFile(filepath.Join(l.ModulesDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(enabled) != "podinfoEnabled: true\n" {
		t.Errorf("modules/values.yaml %q", enabled)
	}
}
