package rbac

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// clusterScoped are the built-in resources that live outside namespaces,
// by group.
var clusterScoped = map[string][]string{ //nolint:gochecknoglobals // a constant table
	"":                             {"namespaces", "nodes", "persistentvolumes", "componentstatuses"},
	"admissionregistration.k8s.io": {"mutatingwebhookconfigurations", "validatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"},
	"apiextensions.k8s.io":         {"customresourcedefinitions"},
	"apiregistration.k8s.io":       {"apiservices"},
	"certificates.k8s.io":          {"certificatesigningrequests", "clustertrustbundles"},
	"flowcontrol.apiserver.k8s.io": {"flowschemas", "prioritylevelconfigurations"},
	"networking.k8s.io":            {"ingressclasses", "ipaddresses", "servicecidrs"},
	"node.k8s.io":                  {"runtimeclasses"},
	"rbac.authorization.k8s.io":    {"clusterroles", "clusterrolebindings"},
	"scheduling.k8s.io":            {"priorityclasses"},
	"storage.k8s.io":               {"storageclasses", "csidrivers", "csinodes", "volumeattachments", "volumeattributesclasses"},
	"resource.k8s.io":              {"deviceclasses", "resourceslices"},
	"authentication.k8s.io":        {"tokenreviews", "selfsubjectreviews"},
	"authorization.k8s.io":         {"subjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews"},
	"internal.apiserver.k8s.io":    {"storageversions"},
	"storagemigration.k8s.io":      {"storageversionmigrations"},
	"coordination.k8s.io":          nil,
	"apps":                         nil,
	"batch":                        nil,
	"policy":                       nil,
	"autoscaling":                  nil,
	"events.k8s.io":                nil,
	"discovery.k8s.io":             nil,
}

// crdInfo is what a CRD of the module set says of its kind.
type crdInfo struct {
	resource   string
	namespaced bool
}

// kinds resolves kinds to resources and scopes from the built-in API and
// the CRDs of the module set.
type kinds struct {
	// crds by group and kind, and by group and plural.
	crds map[schema.GroupKind]crdInfo
}

// newKinds indexes the CRDs among objs.
func newKinds(objs []map[string]any) *kinds {
	k := &kinds{crds: map[schema.GroupKind]crdInfo{}}
	for _, o := range objs {
		if str(o, "kind") != "CustomResourceDefinition" || !strings.HasPrefix(str(o, "apiVersion"), "apiextensions.k8s.io/") {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		scope, _ := spec["scope"].(string)
		plural, _ := names["plural"].(string)
		kind, _ := names["kind"].(string)
		info := crdInfo{resource: plural, namespaced: scope != "Cluster"}
		k.crds[schema.GroupKind{Group: group, Kind: kind}] = info
		k.crds[schema.GroupKind{Group: group, Kind: plural}] = info
	}
	return k
}

// resolve returns the group, resource and scope of a kind (or plural
// resource name) of apiVersion; known is false for a kind neither built in
// nor defined by a CRD of the set, which is then taken as namespaced.
func (k *kinds) resolve(apiVersion, kind string) (key resourceKey, namespaced, known bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return resourceKey{}, true, false
	}
	if info, ok := k.crds[schema.GroupKind{Group: gv.Group, Kind: kind}]; ok {
		return resourceKey{gv.Group, info.resource}, info.namespaced, true
	}
	resource := kind
	builtin := false
	if kind != strings.ToLower(kind) {
		plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
		resource = plural.Resource
		builtin = scheme.Scheme.Recognizes(gv.WithKind(kind))
	}
	cluster, groupKnown := clusterScoped[gv.Group]
	namespaced = !slices.Contains(cluster, resource)
	return resourceKey{gv.Group, resource}, namespaced, builtin || !namespaced || (groupKnown && kind == resource)
}

func str(o map[string]any, key string) string {
	s, _ := o[key].(string)
	return s
}
