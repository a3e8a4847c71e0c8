package drift

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// driftPartial returns the object to server-side apply to put the manifest
// object obj's values of the fields at paths back: obj's apiVersion, kind
// and name, ref's namespace, and for each path the manifest's value of the
// path cut before its first list item. A list is thus applied whole: the
// API server merges associative lists (containers, env, ports) item by
// item by their keys, keeping items others own, and replaces atomic lists,
// which the manifest then owns entirely.
func driftPartial(obj map[string]any, ref Object, paths []fieldpath.Path) (map[string]any, error) {
	partial := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	metadata := map[string]any{"name": ref.Name}
	if ref.Namespace != "" {
		metadata["namespace"] = ref.Namespace
	}
	partial["metadata"] = metadata
	for _, path := range paths {
		var keys []string
		for _, pe := range path {
			if pe.FieldName == nil {
				break
			}
			keys = append(keys, *pe.FieldName)
		}
		value, found, err := unstructured.NestedFieldNoCopy(obj, keys...)
		if err != nil || !found || len(keys) == 0 {
			return nil, fmt.Errorf("field %s is not in the manifest", path)
		}
		if err := unstructured.SetNestedField(partial, value, keys...); err != nil {
			return nil, fmt.Errorf("field %s: %w", path, err)
		}
	}
	return partial, nil
}
