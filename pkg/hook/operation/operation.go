// Package operation is the wire format of the object operations a hook
// writes to KUBERNETES_PATCH_PATH, part of the hook protocol: Parse reads
// and validates the file into Operations, which kube/patch applies.
package operation

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Type names what an Operation does, spelled as hooks write it in
// the "operation" field.
type Type string

// The operations a hook may request.
const (
	// Create creates Object and fails if it already exists.
	Create Type = "Create"
	// CreateIfNotExists creates Object unless an object of that name exists.
	CreateIfNotExists Type = "CreateIfNotExists"
	// CreateOrUpdate creates Object or replaces the existing object with it.
	CreateOrUpdate Type = "CreateOrUpdate"
	// Delete deletes with foreground propagation and waits until the object
	// is gone.
	Delete Type = "Delete"
	// DeleteInBackground deletes with background propagation.
	DeleteInBackground Type = "DeleteInBackground"
	// DeleteNonCascading deletes and orphans the dependents.
	DeleteNonCascading Type = "DeleteNonCascading"
	// MergePatch sends MergePatch as an RFC 7386 JSON merge patch.
	MergePatch Type = "MergePatch"
	// JSONPatch sends JSONPatch as an RFC 6902 JSON patch.
	JSONPatch Type = "JSONPatch"
	// JQPatch reads the object, runs JQFilter on it and writes the result
	// back when it differs.
	JQPatch Type = "JQPatch"
)

// operationTypes lists every Type in documentation order.
func operationTypes() []Type {
	return []Type{
		Create, CreateIfNotExists, CreateOrUpdate,
		Delete, DeleteInBackground, DeleteNonCascading,
		MergePatch, JSONPatch, JQPatch,
	}
}

// IsCreate reports whether the operation carries a whole Object.
func (t Type) IsCreate() bool {
	return t == Create || t == CreateIfNotExists || t == CreateOrUpdate
}

// IsDelete reports whether the operation deletes an object.
func (t Type) IsDelete() bool {
	return t == Delete || t == DeleteInBackground || t == DeleteNonCascading
}

// Operation is one validated object operation from a hook's
// KUBERNETES_PATCH_PATH file.
//
// For create operations Object is set and APIVersion, Kind, Namespace and
// Name are copied from it (Name is empty when the object only has
// metadata.generateName). For the others the coordinates come from the
// operation itself: Kind and Name are always set, APIVersion may be empty
// (the server's preferred version of Kind is used) and Namespace is ignored
// for cluster-scoped kinds.
type Operation struct {
	Type       Type
	APIVersion string
	Kind       string
	Namespace  string
	Name       string

	// Object is the full object of create operations; nil otherwise.
	Object *unstructured.Unstructured
	// MergePatch is the compact JSON object of MergePatch.
	MergePatch json.RawMessage
	// JSONPatch is the compact JSON array of JSONPatch.
	JSONPatch json.RawMessage
	// JQFilter is the filter of JQPatch; it compiles with gojq.
	JQFilter string

	// Subresource, for example "status", is written instead of the object
	// itself by patches and JQPatch. Create operations first write the object
	// and then, when it was created or updated, the subresource from the same
	// object. Delete operations never have one.
	Subresource string
	// IgnoreMissingObject makes patches and JQPatch succeed without doing
	// anything when the object does not exist.
	IgnoreMissingObject bool
	// IgnoreHookError asks for the operation to be applied even when the hook
	// that wrote it failed; see AppliesOnHookError.
	IgnoreHookError bool
}

// AppliesOnHookError reports whether the operation should still be applied
// when the hook that wrote it failed: as in the reference implementation,
// only status updates marked with ignoreHookError are.
func (o Operation) AppliesOnHookError() bool {
	return o.IgnoreHookError && o.Subresource == "status"
}

// String names the operation and its object for errors and logs, e.g.
// "MergePatch apps/v1 Deployment default/nginx".
func (o Operation) String() string {
	var b strings.Builder
	b.WriteString(string(o.Type))
	if o.APIVersion != "" {
		b.WriteString(" " + o.APIVersion)
	}
	b.WriteString(" " + o.Kind + " ")
	if o.Namespace != "" {
		b.WriteString(o.Namespace + "/")
	}
	name := o.Name
	if name == "" && o.Object != nil {
		name = o.Object.GetGenerateName() + "*"
	}
	b.WriteString(name)
	if o.Subresource != "" {
		b.WriteString(" (" + o.Subresource + ")")
	}
	return b.String()
}
