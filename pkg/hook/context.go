package hook

import (
	"encoding/json"
)

// ContextType is the type field of a binding context.
type ContextType string

// Binding context types. Lifecycle contexts (onStartup, beforeHelm, ...) have
// no type.
const (
	TypeSynchronization ContextType = "Synchronization"
	TypeEvent           ContextType = "Event"
	TypeSchedule        ContextType = "Schedule"
	TypeGroup           ContextType = "Group"
)

// FilteredObject is one item of a Synchronization context's objects or of a
// snapshot. A nil field is left out of the JSON: Object is nil when the
// binding does not keep full objects, FilterResult when it has no jqFilter.
// A jq result of null is the JSON text "null", which is kept.
type FilteredObject struct {
	Object       json.RawMessage `json:"object,omitempty"`
	FilterResult json.RawMessage `json:"filterResult,omitempty"`
}

// BindingContext tells a hook why it runs; a run gets a JSON array of them in
// the file at BINDING_CONTEXT_PATH. Which fields are set depends on the type:
//
//   - lifecycle: Binding (the binding type, e.g. "beforeHelm") and, except
//     for onStartup, Snapshots of all the hook's kubernetes bindings;
//   - TypeSchedule: Binding (the binding name) and Snapshots if included;
//   - TypeSynchronization: Binding, Objects (written as [] when empty) and
//     Snapshots if included;
//   - TypeEvent: Binding, WatchEvent, Object, FilterResult and Snapshots if
//     included;
//   - TypeGroup: Binding (the name of the binding that fired), GroupName and
//     Snapshots;
//   - TypeValidating, TypeMutating: Binding, Review (the AdmissionReview)
//     and Snapshots if included;
//   - TypeConversion: Binding, FromVersion, ToVersion, Review (the
//     ConversionReview) and Snapshots if included.
//
// Snapshots is left out when nil and written as {} when empty, so a binding
// that asked for snapshots always gets the field.
type BindingContext struct {
	Binding      string                      `json:"binding"`
	Type         ContextType                 `json:"type,omitempty"`
	GroupName    string                      `json:"groupName,omitempty"`
	WatchEvent   WatchEvent                  `json:"watchEvent,omitempty"`
	Object       json.RawMessage             `json:"object,omitempty"`
	FilterResult json.RawMessage             `json:"filterResult,omitempty"`
	Objects      []FilteredObject            `json:"objects,omitzero"`
	Snapshots    map[string][]FilteredObject `json:"snapshots,omitzero"`
	FromVersion  string                      `json:"fromVersion,omitempty"`
	ToVersion    string                      `json:"toVersion,omitempty"`
	Review       json.RawMessage             `json:"review,omitempty"`
}

// bindingContextJSON has BindingContext's fields without its MarshalJSON.
type bindingContextJSON BindingContext

// MarshalJSON writes the context in the wire format: objects of a
// Synchronization context and every snapshot list are arrays, never null.
func (bc BindingContext) MarshalJSON() ([]byte, error) {
	out := bindingContextJSON(bc)
	switch {
	case bc.Type == TypeSynchronization && bc.Objects == nil:
		out.Objects = []FilteredObject{}
	case bc.Type != TypeSynchronization && len(bc.Objects) == 0:
		out.Objects = nil
	}
	if bc.Snapshots != nil {
		out.Snapshots = make(map[string][]FilteredObject, len(bc.Snapshots))
		for name, items := range bc.Snapshots {
			if items == nil {
				items = []FilteredObject{}
			}
			out.Snapshots[name] = items
		}
	}
	return json.Marshal(out)
}

// MarshalContexts encodes contexts as the JSON array a hook reads from
// BINDING_CONTEXT_PATH; no contexts give [].
func MarshalContexts(contexts []BindingContext) ([]byte, error) {
	if contexts == nil {
		contexts = []BindingContext{}
	}
	return json.Marshal(contexts)
}
