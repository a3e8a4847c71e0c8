package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// ObjectsFromManifest returns the objects of a rendered release manifest
// (multi-document YAML) in order: documents that are empty or comments
// only are skipped, and a List (a kind ending in "List" with items) stands
// for its items. A document that is not an object, or an object without
// apiVersion, kind or name, is an error naming the document by position.
func ObjectsFromManifest(manifest string) ([]ObjectRef, error) {
	var objects []ObjectRef
	err := eachYAMLDocument(strings.NewReader(manifest), func(n int, doc []byte) error {
		found, err := healDocumentObjects(doc)
		if err != nil {
			return fmt.Errorf("document %d: %w", n, err)
		}
		objects = append(objects, found...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifest %w", err)
	}
	return objects, nil
}

// healManifestObject is the part of a manifest object that names it.
type healManifestObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	// Items is set when the document is a List.
	Items []json.RawMessage `json:"items"`
}

// healDocumentObjects returns the objects of one manifest document.
func healDocumentObjects(doc []byte) ([]ObjectRef, error) {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	obj, err := healDecodeObject(raw)
	if err != nil {
		return nil, err
	}
	if obj.Items == nil || !strings.HasSuffix(obj.Kind, "List") {
		ref, err := obj.ref()
		if err != nil {
			return nil, err
		}
		return []ObjectRef{ref}, nil
	}
	objects := make([]ObjectRef, 0, len(obj.Items))
	for i, rawItem := range obj.Items {
		item, err := healDecodeObject(rawItem)
		if err != nil {
			return nil, fmt.Errorf("%s item %d: %w", obj.Kind, i, err)
		}
		ref, err := item.ref()
		if err != nil {
			return nil, fmt.Errorf("%s item %d: %w", obj.Kind, i, err)
		}
		objects = append(objects, ref)
	}
	return objects, nil
}

// healDecodeObject decodes a JSON object.
func healDecodeObject(raw []byte) (healManifestObject, error) {
	var obj healManifestObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return healManifestObject{}, fmt.Errorf("not an object: %w", err)
	}
	return obj, nil
}

// ref returns the object's reference, or an error if it is incomplete.
func (o healManifestObject) ref() (ObjectRef, error) {
	if o.APIVersion == "" || o.Kind == "" {
		return ObjectRef{}, errors.New("object has no apiVersion or kind")
	}
	if o.Metadata.Name == "" {
		return ObjectRef{}, fmt.Errorf("%s has no name", o.Kind)
	}
	return ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name}, nil
}
