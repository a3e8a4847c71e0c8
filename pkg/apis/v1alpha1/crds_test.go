package v1alpha1

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// TestPrinterColumns checks that every printer column's JSONPath names a
// field of the schema, which the generator does not: a renamed field would
// leave its column empty.
func TestPrinterColumns(t *testing.T) {
	for _, doc := range CRDs() {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			for _, col := range v.AdditionalPrinterColumns {
				if !schemaHas(v.Schema.OpenAPIV3Schema, col.JSONPath) {
					t.Errorf("%s %s: column %s: no field %s in the schema", crd.Name, v.Name, col.Name, col.JSONPath)
				}
			}
		}
	}
}

// filter matches a JSONPath filter or index, [?(@.type=="Ready")].
var filter = regexp.MustCompile(`\[[^\]]*\]`)

// schemaHas reports whether the JSONPath of a printer column (dotted
// fields, a filter selecting array items) leads to a property of s.
// Under metadata every field is taken to exist: the schema leaves it to
// the API server.
func schemaHas(s *apiextensionsv1.JSONSchemaProps, path string) bool {
	if strings.HasPrefix(path, ".metadata.") {
		return true
	}
	path = filter.ReplaceAllString(path, ".[]")
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "."), ".") {
		switch seg {
		case "[]":
			if s.Items == nil || s.Items.Schema == nil {
				return false
			}
			s = s.Items.Schema
		default:
			p, ok := s.Properties[seg]
			if !ok {
				return false
			}
			s = &p
		}
	}
	return true
}
