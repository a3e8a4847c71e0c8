package kube

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// driftParseManifest returns the objects of a multi-document YAML manifest
// in order, with numbers as int64 or float64 like the dynamic client's.
// Empty and comment-only documents are skipped; the items of a List stand
// for the List, as Helm applies them. A document that is not an object with
// apiVersion, kind and metadata.name is an error.
func driftParseManifest(manifest string) ([]map[string]any, error) {
	var objs []map[string]any
	err := eachYAMLDocument(strings.NewReader(manifest), func(n int, doc []byte) error {
		i := n - 1 // numbered from 0 in this function's errors
		var obj map[string]any
		if err := utilyaml.Unmarshal(doc, &obj); err != nil {
			return fmt.Errorf("manifest document %d: %w", i, err)
		}
		if len(obj) == 0 {
			return nil
		}
		for _, o := range driftUnwrapList(obj) {
			u := unstructured.Unstructured{Object: o}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				return fmt.Errorf("manifest document %d: not an object with apiVersion, kind and metadata.name", i)
			}
			objs = append(objs, o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return objs, nil
}

// driftUnwrapList returns the items of a List, or obj itself.
func driftUnwrapList(obj map[string]any) []map[string]any {
	kind, _ := obj["kind"].(string)
	items, ok := obj["items"].([]any)
	if !ok || !strings.HasSuffix(kind, "List") {
		return []map[string]any{obj}
	}
	out := make([]map[string]any, 0, len(items))
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// driftSecretData returns obj as the API server stores it when obj is a
// v1 Secret with stringData: the stringData entries base64-encoded into
// data (replacing data entries of the same key) and stringData gone, which
// the server never returns. Other objects are returned as they are; obj is
// never changed.
func driftSecretData(obj map[string]any) map[string]any {
	stringData, ok := obj["stringData"].(map[string]any)
	if !ok || obj["apiVersion"] != "v1" || obj["kind"] != "Secret" {
		return obj
	}
	out := maps.Clone(obj)
	delete(out, "stringData")
	data, _ := obj["data"].(map[string]any)
	data = maps.Clone(data)
	if data == nil {
		data = map[string]any{}
	}
	for key, value := range stringData {
		if s, ok := value.(string); ok {
			data[key] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out["data"] = data
	return out
}

// driftPartial returns the object to server-side apply to put the manifest
// object obj's values of fields (paths spelled by driftPathString) back:
// obj's apiVersion, kind and name, ref's namespace, and for each path the
// manifest's value of the path cut before its first list item. A list is
// thus applied whole: the API server merges associative lists (containers,
// env, ports) item by item by their keys, keeping items others own, and
// replaces atomic lists, which the manifest then owns entirely.
func driftPartial(obj map[string]any, ref DriftObject, fields []string) (map[string]any, error) {
	partial := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	metadata := map[string]any{"name": ref.Name}
	if ref.Namespace != "" {
		metadata["namespace"] = ref.Namespace
	}
	partial["metadata"] = metadata
	for _, field := range fields {
		path, err := driftParsePath(field)
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
