package manifest

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/yaml"
)

// Annotations of nelm, the deploy engine of werf and Deckhouse, that the
// Helm library can honour, translated into Helm's own (see
// docs/migration.md); a Helm annotation the chart sets itself wins.
const (
	// AnnotationWerfResourcePolicy "keep" keeps an object on uninstall
	// and when the chart stops rendering it, as helm.sh/resource-policy.
	AnnotationWerfResourcePolicy = "werf.io/resource-policy"
	// AnnotationWerfOwnership "anyone" keeps an object on uninstall and
	// when the chart stops rendering it; Helm's ownership annotations are
	// still set and checked.
	AnnotationWerfOwnership = "werf.io/ownership"
	// AnnotationWerfDeletePolicy on a chart hook is its
	// helm.sh/hook-delete-policy: before-creation, succeeded and failed
	// are before-hook-creation, hook-succeeded and hook-failed.
	AnnotationWerfDeletePolicy = "werf.io/delete-policy"

	annotationResourcePolicy   = "helm.sh/resource-policy"
	annotationHookDeletePolicy = "helm.sh/hook-delete-policy"
	resourcePolicyKeep         = "keep"
)

// keeps reports whether an object with annotations is kept on uninstall
// by a nelm annotation that Helm's own does not override.
func keeps(annotations map[string]string) bool {
	if _, ok := annotations[annotationResourcePolicy]; ok {
		return false
	}
	return strings.TrimSpace(annotations[AnnotationWerfResourcePolicy]) == resourcePolicyKeep ||
		strings.TrimSpace(annotations[AnnotationWerfOwnership]) == "anyone"
}

// setNodeKeep adds helm.sh/resource-policy: keep to the object mapping
// obj when a nelm annotation asks to keep it.
func setNodeKeep(obj *yamlv3.Node) {
	meta := mappingValue(obj, "metadata")
	if meta == nil || meta.Kind != yamlv3.MappingNode {
		return
	}
	ann := mappingValue(meta, "annotations")
	if ann == nil || ann.Kind != yamlv3.MappingNode {
		return
	}
	annotations := map[string]string{}
	for i := 0; i+1 < len(ann.Content); i += 2 {
		annotations[ann.Content[i].Value] = ann.Content[i+1].Value
	}
	if !keeps(annotations) {
		return
	}
	ann.Style = 0
	ann.Content = append(ann.Content,
		&yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: annotationResourcePolicy},
		&yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: resourcePolicyKeep})
}

// setKeep is setNodeKeep for a decoded object.
func setKeep(obj map[string]any) {
	meta, _ := obj["metadata"].(map[string]any)
	raw, _ := meta["annotations"].(map[string]any)
	annotations := map[string]string{}
	for k, v := range raw {
		if s, ok := v.(string); ok {
			annotations[k] = s
		}
	}
	if keeps(annotations) {
		raw[annotationResourcePolicy] = resourcePolicyKeep
	}
}

// hookDeletePolicies returns the Helm delete policies of a
// werf.io/delete-policy value, and the parts that have none.
func hookDeletePolicies(value string) (policies []release.HookDeletePolicy, unknown []string) {
	for part := range strings.SplitSeq(value, ",") {
		switch p := strings.TrimSpace(part); p {
		case "":
		case "before-creation":
			policies = append(policies, release.HookBeforeHookCreation)
		case "succeeded":
			policies = append(policies, release.HookSucceeded)
		case "failed":
			policies = append(policies, release.HookFailed)
		default:
			unknown = append(unknown, p)
		}
	}
	return policies, unknown
}

// TranslateHookPolicies gives each chart hook of rel without
// helm.sh/hook-delete-policy the delete policies of its
// werf.io/delete-policy. Helm reads a hook's policies from the release it
// is about to run the hooks of, after it stored it (HookPolicies calls
// this before each record is created), and the release's later operations
// (uninstall) read them from the record.
func TranslateHookPolicies(rel *release.Release) {
	for _, h := range rel.Hooks {
		if len(h.DeletePolicies) > 0 || !strings.Contains(h.Manifest, AnnotationWerfDeletePolicy) {
			continue
		}
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if yaml.Unmarshal([]byte(h.Manifest), &obj) != nil {
			continue
		}
		if _, ok := obj.Metadata.Annotations[annotationHookDeletePolicy]; ok {
			continue
		}
		h.DeletePolicies, _ = hookDeletePolicies(obj.Metadata.Annotations[AnnotationWerfDeletePolicy])
	}
}

// HookPolicies is a release driver that gives the chart hooks of each
// release it creates the delete policies of their nelm annotations (see
// TranslateHookPolicies) before the record is written.
type HookPolicies struct {
	driver.Driver
}

// Create translates rel's hook delete policies, then stores it.
func (d HookPolicies) Create(key string, rel *release.Release) error {
	TranslateHookPolicies(rel)
	return d.Driver.Create(key, rel) //nolint:wrapcheck // as the driver returned it
}
