package helm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nelmChart has objects kept by nelm's annotations (or not, where Helm's
// own says otherwise) and chart hooks with nelm's delete policies.
func nelmChart(t *testing.T) string {
	t.Helper()
	cm := func(name, annotations string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations: {" + annotations + "}\n"
	}
	return writeFiles(t, map[string]string{
		"templates/objects.yaml": cm("plain", "") +
			cm("policy-keep", "werf.io/resource-policy: keep") +
			cm("anyone", "werf.io/ownership: anyone") +
			cm("owned", "werf.io/ownership: release") +
			cm("helm-wins", `werf.io/ownership: anyone, helm.sh/resource-policy: "delete"`),
		"templates/hooks.yaml": cm("hook-succeeded", `helm.sh/hook: post-install, werf.io/delete-policy: succeeded`) +
			cm("hook-default", `helm.sh/hook: post-install`) +
			cm("hook-helm-wins", `helm.sh/hook: post-install, werf.io/delete-policy: succeeded, helm.sh/hook-delete-policy: before-hook-creation`),
	})
}

// werf.io/resource-policy: keep and werf.io/ownership: anyone keep an
// object on uninstall as helm.sh/resource-policy: keep does, unless the
// chart sets Helm's own; werf.io/delete-policy: succeeded deletes a chart
// hook once it succeeded, unless the chart sets Helm's own policy.
func TestNelmAnnotationsHonoured(t *testing.T) {
	env, cluster := newTestEnv(t), newFakeCluster()
	env.kube = cluster
	r := Release{Name: "nelm", ChartDir: nelmChart(t), Values: map[string]any{"global": map[string]any{}}}
	out, err := env.client.Apply(t.Context(), r)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	want := []string{
		"ConfigMap/anyone (nelm)", "ConfigMap/helm-wins (nelm)", "ConfigMap/hook-default ()", "ConfigMap/hook-helm-wins ()",
		"ConfigMap/owned (nelm)", "ConfigMap/plain (nelm)", "ConfigMap/policy-keep (nelm)",
	}
	if diff := cmp.Diff(want, cluster.inventory()); diff != "" {
		t.Errorf("objects after install (-want +got):\n%s", diff)
	}
	rendered, err := env.client.Render(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if rendered.Manifest != out.Rendered.Manifest {
		t.Error("Render and Apply render differently")
	}
	// Helm's own annotation wins. (Helm's uninstall leaves an object whose
	// helm.sh/resource-policy is anything but keep, so only the manifest
	// tells.)
	if n := strings.Count(rendered.Manifest, "helm.sh/resource-policy: keep"); n != 2 {
		t.Errorf("%d objects translated to helm.sh/resource-policy: keep, want 2:\n%s", n, rendered.Manifest)
	}

	if _, err := env.client.Uninstall(t.Context(), "nelm"); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	want = []string{
		"ConfigMap/anyone (nelm)", "ConfigMap/helm-wins (nelm)", "ConfigMap/hook-default ()", "ConfigMap/hook-helm-wins ()", "ConfigMap/policy-keep (nelm)",
	}
	if diff := cmp.Diff(want, cluster.inventory()); diff != "" {
		t.Errorf("objects after uninstall (-want +got):\n%s", diff)
	}
}
