package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ManifestObjects returns the objects of a rendered manifest (multi-document
// YAML) in order, with numbers as int64 or float64 like the dynamic
// client's. Documents that are empty or comments only are skipped, and a
// List (a kind ending in "List" with items) stands for its items, as Helm
// applies them. A document that is not an object, or an object without
// apiVersion, kind or name, is an error naming the document by its
// position from 1.
func ManifestObjects(manifest string) ([]map[string]any, error) {
	var objs []map[string]any
	err := EachDocument(strings.NewReader(manifest), func(n int, doc []byte) error {
		found, err := documentObjects(doc)
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		objs = append(objs, found...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest %w", err)
	}
	return objs, nil
}

// documentObjects returns the objects of one manifest document.
func documentObjects(doc []byte) ([]map[string]any, error) {
	var v any
	if err := utilyaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", v)
	}
	kind, _ := obj["kind"].(string)
	items, isList := obj["items"].([]any)
	if !isList || !strings.HasSuffix(kind, "List") {
		if err := checkNamed(obj); err != nil {
			return nil, err
		}
		return []map[string]any{obj}, nil
	}
	out := make([]map[string]any, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s item %d: not an object: %T", kind, i, item)
		}
		if err := checkNamed(m); err != nil {
			return nil, fmt.Errorf("%s item %d: %w", kind, i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// checkNamed fails unless obj has an apiVersion, a kind and a name.
func checkNamed(obj map[string]any) error {
	u := unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return fmt.Errorf("object has no apiVersion or kind")
	}
	if u.GetName() == "" {
		return fmt.Errorf("%s has no name", u.GetKind())
	}
	return nil
}
