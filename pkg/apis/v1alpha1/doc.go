// Package v1alpha1 holds the addon-operator.io/v1alpha1 API: the Module
// objects through which the operator shows each module's state, and the
// ModuleConfig objects through which users may configure modules instead of
// the ConfigMap; with their CustomResourceDefinitions.
//
// The CRDs in crds/ and zz_generated.deepcopy.go are generated from the
// types' kubebuilder markers by controller-gen (make generate); edit the
// types, never the generated files.
//
// +kubebuilder:object:generate=true
// +groupName=addon-operator.io
package v1alpha1

import (
	"embed"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of the API.
const (
	Group   = "addon-operator.io"
	Version = "v1alpha1"
)

// Kinds and resources of the API.
const (
	KindModule             = "Module"
	KindModuleConfig       = "ModuleConfig"
	ResourceModules        = "modules"
	ResourceModuleConfigs  = "moduleconfigs"
	APIVersion             = Group + "/" + Version
	GlobalModuleConfigName = "global"
)

// ModulesResource is the resource of Module objects.
func ModulesResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: ResourceModules}
}

// ModuleConfigsResource is the resource of ModuleConfig objects.
func ModuleConfigsResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: ResourceModuleConfigs}
}

//go:embed crds/*.yaml
var crdFiles embed.FS

// CRDs returns the CustomResourceDefinitions of the API as YAML documents,
// Module first. The chart carries the same files in its crds/.
func CRDs() [][]byte {
	names := []string{"crds/" + Group + "_" + ResourceModules + ".yaml", "crds/" + Group + "_" + ResourceModuleConfigs + ".yaml"}
	out := make([][]byte, 0, len(names))
	for _, name := range names {
		b, err := crdFiles.ReadFile(name)
		if err != nil {
			panic(err) // compiled in: cannot happen
		}
		out = append(out, b)
	}
	return out
}
