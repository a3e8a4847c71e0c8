package v1alpha1

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDs checks that the CRDs describe this package's kinds and that the
// chart carries the same files.
func TestCRDs(t *testing.T) {
	want := []struct{ file, name, kind, plural string }{
		{Group + "_modules.yaml", ResourceModules + "." + Group, KindModule, ResourceModules},
		{Group + "_moduleconfigs.yaml", ResourceModuleConfigs + "." + Group, KindModuleConfig, ResourceModuleConfigs},
	}
	docs := CRDs()
	if len(docs) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(docs), len(want))
	}
	for i, w := range want {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(docs[i], &crd); err != nil {
			t.Fatalf("%s: %v", w.file, err)
		}
		if crd.Name != w.name || crd.Spec.Group != Group || crd.Spec.Names.Kind != w.kind || crd.Spec.Names.Plural != w.plural ||
			crd.Spec.Scope != apiextensionsv1.ClusterScoped || len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != Version ||
			crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
			t.Errorf("%s: %s %s/%s, want %s: one cluster-scoped version %s of %s with a status subresource",
				w.file, crd.Name, crd.Spec.Group, crd.Spec.Names.Kind, w.name, Version, w.kind)
		}
		chart, err := os.ReadFile(filepath.Join("..", "..", "..", "charts", "addon-operator", "crds", w.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(chart, docs[i]) {
			t.Errorf("charts/addon-operator/crds/%s differs from pkg/apis/v1alpha1/crds/%s; run make generate", w.file, w.file)
		}
	}
}
