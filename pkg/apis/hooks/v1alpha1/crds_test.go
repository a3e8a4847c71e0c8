package v1alpha1

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDs checks that the execution-hooks module installs the CRDs
// generated from these types, under the resources this package names, and
// that every printer column's JSONPath names a field of the schema, which
// the generator does not check.
func TestCRDs(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "modules", "060-execution-hooks", "crds")
	tests := []struct{ resource, kind string }{
		{ExecutionHooksResource, "ExecutionHook"},
		{ExecutionHookTemplatesResource, "ExecutionHookTemplate"},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, Group+"_"+tc.resource+".yaml"))
			if err != nil {
				t.Fatalf("%v; run make generate", err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(b, &crd); err != nil {
				t.Fatal(err)
			}
			if crd.Name != tc.resource+"."+Group || crd.Spec.Group != Group || crd.Spec.Names.Kind != tc.kind ||
				crd.Spec.Scope != apiextensionsv1.NamespaceScoped || len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != Version {
				t.Errorf("%s %s/%s %s, want %s.%s: one namespaced version %s of %s",
					crd.Name, crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope, tc.resource, Group, Version, tc.kind)
			}
			for _, v := range crd.Spec.Versions {
				for _, col := range v.AdditionalPrinterColumns {
					if !schemaHas(v.Schema.OpenAPIV3Schema, col.JSONPath) {
						t.Errorf("%s: column %s: no field %s in the schema", v.Name, col.Name, col.JSONPath)
					}
				}
			}
		})
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
