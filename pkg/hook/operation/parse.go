package operation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/addon-operator/addon-operator/pkg/jq"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Parse reads a hook's KUBERNETES_PATCH_PATH file.
//
// The file holds JSON or YAML: a JSON stream of operation objects and arrays
// of them (as appending with ">>" produces), or YAML documents separated by
// "---", each an operation or a list of operations. Empty input and empty
// documents yield no operations. The fields are those of the reference
// implementation: operation, apiVersion, kind, namespace, name, object,
// mergePatch, jsonPatch, jqFilter, subresource, ignoreMissingObject and
// ignoreHookError; object, mergePatch and jsonPatch may also be strings
// holding YAML or JSON. Unknown fields are ignored, as the reference does.
//
// Every operation is validated; the first invalid one makes the error, which
// names the operation by its 0-based index across the whole file, its type
// and the field, e.g. "operation 2 (MergePatch): name is required". A
// successful result is never nil.
func Parse(data []byte) ([]Operation, error) {
	docs, err := opDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("parse object operations: %w", err)
	}
	ops := []Operation{}
	for i, doc := range docs {
		items, err := opItems(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		for _, item := range items {
			op, err := opParseOperation(item)
			if err != nil {
				if op.Type != "" {
					return nil, fmt.Errorf("operation %d (%s): %w", len(ops), op.Type, err)
				}
				return nil, fmt.Errorf("operation %d: %w", len(ops), err)
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// opDocuments splits the input into JSON documents. A JSON stream is tried
// first because "{...}{...}" is not YAML; when both fail, the error of the
// format the input looks like is returned.
func opDocuments(data []byte) ([]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	docs, jsonErr := opJSONStream(data)
	if jsonErr == nil {
		return docs, nil
	}
	docs, yamlErr := opYAMLStream(data)
	if yamlErr == nil {
		return docs, nil
	}
	if data[0] == '{' || data[0] == '[' {
		return nil, jsonErr
	}
	return nil, yamlErr
}

func opJSONStream(data []byte) ([]json.RawMessage, error) {
	return opStream(json.NewDecoder(bytes.NewReader(data)), "json")
}

// opYAMLStream converts each YAML document to JSON; empty documents are
// left out.
func opYAMLStream(data []byte) ([]json.RawMessage, error) {
	return opStream(utilyaml.NewYAMLToJSONDecoder(bytes.NewReader(data)), "yaml")
}

// opStream decodes every document dec holds, naming a broken one by its
// 0-based index and format.
func opStream(dec interface{ Decode(any) error }, format string) ([]json.RawMessage, error) {
	var docs []json.RawMessage
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", format, len(docs), err)
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
}

// opItems returns the operations of one document: itself when it is an
// object, its elements when it is an array, none when it is null.
func opItems(doc json.RawMessage) ([]json.RawMessage, error) {
	switch doc[0] {
	case '{':
		return []json.RawMessage{doc}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(doc, &items); err != nil {
			return nil, err
		}
		return items, nil
	case 'n':
		return nil, nil
	default:
		return nil, fmt.Errorf("is %s, want an operation or a list of operations", jsonKindOf(doc))
	}
}

// opParseOperation validates one operation object. The returned
// operation's Type is set whenever it is known, also with an error.
func opParseOperation(raw json.RawMessage) (Operation, error) {
	var f opFields
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return Operation{}, fmt.Errorf("is %s, want an object", jsonKindOf(raw))
	}
	typ, err := f.str("operation")
	if err != nil {
		return Operation{}, err
	}
	if typ == "" {
		return Operation{}, errors.New("operation is required")
	}
	op := Operation{Type: Type(typ)}
	if !slices.Contains(operationTypes(), op.Type) {
		return Operation{}, fmt.Errorf("unknown operation %q, want one of %v", typ, operationTypes())
	}
	if err := op.parseOptions(f); err != nil {
		return op, err
	}
	if op.Type.IsCreate() {
		err := op.parseObject(f)
		return op, err
	}
	if err := op.parseCoordinates(f); err != nil {
		return op, err
	}
	switch op.Type {
	case MergePatch:
		op.MergePatch, err = opMergePatch(f)
	case JSONPatch:
		op.JSONPatch, err = opJSONPatch(f)
	case JQPatch:
		op.JQFilter, err = opJQFilter(f)
	default: // deletes
		if op.Subresource != "" {
			err = errors.New("subresource is not supported: delete the object itself")
		}
	}
	return op, err
}

// parseOptions reads the fields every operation may carry.
func (o *Operation) parseOptions(f opFields) error {
	sub, err := f.str("subresource")
	if err != nil {
		return err
	}
	o.Subresource = strings.Trim(sub, "/")
	if o.IgnoreMissingObject, err = f.boolean("ignoreMissingObject"); err != nil {
		return err
	}
	o.IgnoreHookError, err = f.boolean("ignoreHookError")
	return err
}

// parseCoordinates reads apiVersion, kind, namespace and name of the
// operations that name an existing object.
func (o *Operation) parseCoordinates(f opFields) error {
	var err error
	if o.APIVersion, err = f.str("apiVersion"); err != nil {
		return err
	}
	if _, err := schema.ParseGroupVersion(o.APIVersion); err != nil {
		return fmt.Errorf("apiVersion: %w", err)
	}
	if o.Kind, err = f.str("kind"); err != nil {
		return err
	}
	if o.Kind == "" {
		return errors.New("kind is required")
	}
	if o.Namespace, err = f.str("namespace"); err != nil {
		return err
	}
	if o.Name, err = f.str("name"); err != nil {
		return err
	}
	if o.Name == "" {
		return errors.New("name is required")
	}
	return nil
}

// parseObject reads the object of create operations and copies its
// coordinates; the operation's own apiVersion, kind, namespace and name are
// ignored, as in the reference implementation.
func (o *Operation) parseObject(f opFields) error {
	raw, err := f.document("object")
	if err != nil {
		return err
	}
	if raw[0] != '{' {
		return fmt.Errorf("object is %s, want an object", jsonKindOf(raw))
	}
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
		Metadata   struct {
			Name         any `json:"name"`
			GenerateName any `json:"generateName"`
			Namespace    any `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return fmt.Errorf("object: %w", err)
	}
	fields := []struct {
		name  string
		value any
	}{
		{"apiVersion", head.APIVersion}, {"kind", head.Kind}, {"metadata.name", head.Metadata.Name},
		{"metadata.generateName", head.Metadata.GenerateName}, {"metadata.namespace", head.Metadata.Namespace},
	}
	for _, field := range fields {
		if _, ok := field.value.(string); field.value != nil && !ok {
			return fmt.Errorf("object.%s must be a string", field.name)
		}
	}
	o.APIVersion, _ = head.APIVersion.(string)
	o.Kind, _ = head.Kind.(string)
	o.Name, _ = head.Metadata.Name.(string)
	o.Namespace, _ = head.Metadata.Namespace.(string)
	generateName, _ := head.Metadata.GenerateName.(string)
	switch {
	case o.APIVersion == "":
		return errors.New("object.apiVersion is required")
	case o.Kind == "":
		return errors.New("object.kind is required")
	case o.Name == "" && (o.Type != Create || generateName == ""):
		return errors.New("object.metadata.name is required")
	}
	if _, err := schema.ParseGroupVersion(o.APIVersion); err != nil {
		return fmt.Errorf("object.apiVersion: %w", err)
	}
	o.Object = &unstructured.Unstructured{}
	if err := o.Object.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("object: %w", err)
	}
	return nil
}

func opMergePatch(f opFields) (json.RawMessage, error) {
	raw, err := f.document("mergePatch")
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		return nil, fmt.Errorf("mergePatch is %s, want an object", jsonKindOf(raw))
	}
	if len(members) == 0 {
		return nil, errors.New("mergePatch must not be empty")
	}
	return opCompact(raw)
}

func opJSONPatch(f opFields) (json.RawMessage, error) {
	raw, err := f.document("jsonPatch")
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("jsonPatch is %s, want a list of operations", jsonKindOf(raw))
	}
	if len(items) == 0 {
		return nil, errors.New("jsonPatch must not be empty")
	}
	if _, err := values.ParsePatch(raw); err != nil {
		return nil, fmt.Errorf("jsonPatch: %w", err)
	}
	return opCompact(raw)
}

func opJQFilter(f opFields) (string, error) {
	filter, err := f.str("jqFilter")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(filter) == "" {
		return "", errors.New("jqFilter is required")
	}
	if _, err := jq.Compile(filter); err != nil {
		return "", fmt.Errorf("jqFilter: %w", err)
	}
	return filter, nil
}

func opCompact(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
