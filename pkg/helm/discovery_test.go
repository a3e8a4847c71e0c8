package helm

import (
	"context"
	"testing"
)

func TestApplyAndUninstallRefreshDiscoveryForCRDs(t *testing.T) {
	env := newTestEnv(t)
	refreshes := 0
	env.client.refreshDiscovery = func() { refreshes++ }
	ctx := context.Background()

	plain := echoRelease(echoChart(t, "one"), "hello")
	if _, err := env.client.Apply(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if refreshes != 0 {
		t.Fatalf("a release without CRDs refreshed discovery %d times", refreshes)
	}

	crd := writeFiles(t, map[string]string{"templates/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`})
	r := Release{Name: "widgets", ChartDir: crd, Values: map[string]any{"global": map[string]any{}}}
	if _, err := env.client.Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	if refreshes != 1 {
		t.Fatalf("installing a CRD refreshed discovery %d times, want 1", refreshes)
	}
	out, err := env.client.Apply(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Skipped || refreshes != 1 {
		t.Fatalf("an unchanged release: skipped %v, %d refreshes; want true, 1", out.Skipped, refreshes)
	}
	if _, err := env.client.Uninstall(ctx, "widgets"); err != nil {
		t.Fatal(err)
	}
	if refreshes != 2 {
		t.Errorf("uninstalling a CRD refreshed discovery %d times in all, want 2", refreshes)
	}
	if _, err := env.client.Uninstall(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if refreshes != 2 {
		t.Errorf("uninstalling a release without CRDs refreshed discovery (%d in all)", refreshes)
	}
}
