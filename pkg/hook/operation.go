package hook

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OperationType names what an Operation does, spelled as hooks write it in
// the "operation" field.
type OperationType string

// The operations a hook may request.
const (
	// OpCreate creates Object and fails if it already exists.
	OpCreate OperationType = "Create"
	// OpCreateIfNotExists creates Object unless an object of that name exists.
	OpCreateIfNotExists OperationType = "CreateIfNotExists"
	// OpCreateOrUpdate creates Object or replaces the existing object with it.
	OpCreateOrUpdate OperationType = "CreateOrUpdate"
	// OpDelete deletes with foreground propagation and waits until the object
	// is gone.
	OpDelete OperationType = "Delete"
	// OpDeleteInBackground deletes with background propagation.
	OpDeleteInBackground OperationType = "DeleteInBackground"
	// OpDeleteNonCascading deletes and orphans the dependents.
	OpDeleteNonCascading OperationType = "DeleteNonCascading"
	// OpMergePatch sends MergePatch as an RFC 7386 JSON merge patch.
	OpMergePatch OperationType = "MergePatch"
	// OpJSONPatch sends JSONPatch as an RFC 6902 JSON patch.
	OpJSONPatch OperationType = "JSONPatch"
	// OpJQPatch reads the object, runs JQFilter on it and writes the result
	// back when it differs.
	OpJQPatch OperationType = "JQPatch"
)

// operationTypes lists every OperationType in documentation order.
func operationTypes() []OperationType {
	return []OperationType{
		OpCreate, OpCreateIfNotExists, OpCreateOrUpdate,
		OpDelete, OpDeleteInBackground, OpDeleteNonCascading,
		OpMergePatch, OpJSONPatch, OpJQPatch,
	}
}

// IsCreate reports whether the operation carries a whole Object.
func (t OperationType) IsCreate() bool {
	return t == OpCreate || t == OpCreateIfNotExists || t == OpCreateOrUpdate
}

// IsDelete reports whether the operation deletes an object.
func (t OperationType) IsDelete() bool {
	return t == OpDelete || t == OpDeleteInBackground || t == OpDeleteNonCascading
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
	Type       OperationType
	APIVersion string
	Kind       string
	Namespace  string
	Name       string

	// Object is the full object of create operations; nil otherwise.
	Object *unstructured.Unstructured
	// MergePatch is the compact JSON object of OpMergePatch.
	MergePatch json.RawMessage
	// JSONPatch is the compact JSON array of OpJSONPatch.
	JSONPatch json.RawMessage
	// JQFilter is the filter of OpJQPatch; it compiles with gojq.
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
