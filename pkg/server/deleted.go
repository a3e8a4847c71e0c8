package server

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// Deleted returns the objects of a release's deployed manifest that the
// rendered manifest no longer has, in deployed order: the next Helm
// upgrade deletes them (the release's uninstall, with rendered empty).
// Objects already gone from the cluster are left out. Each diff removes
// the live object's YAML.
func (c Cluster) Deleted(ctx context.Context, deployed, rendered string) ([]ObjectDiff, error) {
	keep, err := kube.ManifestObjects(rendered)
	if err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(keep))
	for _, obj := range keep {
		kept[identity(obj)] = true
	}
	old, err := kube.ManifestObjects(deployed)
	if err != nil {
		return nil, fmt.Errorf("deployed %w", err)
	}
	var out []ObjectDiff
	for _, obj := range old {
		if kept[identity(obj)] {
			continue
		}
		ref, live, err := c.live(ctx, &unstructured.Unstructured{Object: obj})
		if err != nil {
			return nil, err
		}
		if live == nil {
			continue
		}
		got, err := yaml.Marshal(stripServerFields(live))
		if err != nil {
			return nil, fmt.Errorf("marshal live %s: %w", ref, err)
		}
		diff := unifiedDiff(ref+" (live)", ref+" (deleted)", splitLines(string(got)), nil)
		out = append(out, ObjectDiff{Object: ref, Action: ActionDelete, Diff: diff})
	}
	return out, nil
}

// identity names an object by API group, kind, namespace as written and
// name: the same object in two renders of one chart.
func identity(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + u.GetNamespace() + "/" + u.GetName()
}
