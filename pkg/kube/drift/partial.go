package drift

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// driftPartial returns the object to server-side apply to put the manifest
// object obj's values of fields (paths spelled by pathString) back:
// obj's apiVersion, kind and name, ref's namespace, and for each path the
// manifest's value of the path cut before its first list item. A list is
// thus applied whole: the API server merges associative lists (containers,
// env, ports) item by item by their keys, keeping items others own, and
// replaces atomic lists, which the manifest then owns entirely.
func driftPartial(obj map[string]any, ref Object, fields []string) (map[string]any, error) {
	partial := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	metadata := map[string]any{"name": ref.Name}
	if ref.Namespace != "" {
		metadata["namespace"] = ref.Namespace
	}
	partial["metadata"] = metadata
	for _, field := range fields {
		path, err := parsePath(field)
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, step := range path {
			if step.isList() {
				break
			}
			keys = append(keys, step.key)
		}
		value, found, err := unstructured.NestedFieldNoCopy(obj, keys...)
		if err != nil || !found || len(keys) == 0 {
			return nil, fmt.Errorf("field %s is not in the manifest", field)
		}
		if err := unstructured.SetNestedField(partial, value, keys...); err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
	}
	return partial, nil
}
