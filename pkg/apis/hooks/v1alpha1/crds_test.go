package v1alpha1

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDs checks that the execution-hooks module installs the CRDs
// generated from these types, under the resources this package names.
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
		})
	}
}
