package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
)

// BindingContext is one element of the JSON array in BINDING_CONTEXT_PATH.
type BindingContext struct {
	// Binding is the binding's name, or the lifecycle binding (beforeHelm...).
	Binding string `json:"binding"`
	// Type is Synchronization, Event, Schedule or Group; empty for
	// lifecycle bindings.
	Type string `json:"type,omitempty"`
	// WatchEvent is Added, Modified or Deleted for an Event.
	WatchEvent string `json:"watchEvent,omitempty"`
	// Object and FilterResult describe an Event's object.
	Object       json.RawMessage `json:"object,omitempty"`
	FilterResult json.RawMessage `json:"filterResult,omitempty"`
	// Objects lists every matching object of a Synchronization.
	Objects []ObjectResult `json:"objects,omitempty"`
	// Snapshots holds the current objects of the bindings the hook
	// included, by binding name.
	Snapshots map[string][]ObjectResult `json:"snapshots,omitempty"`
}

// ObjectResult is an object of a Synchronization or a snapshot: the full
// object (absent when only filter results are kept) and the jqFilter's
// result (absent without a filter).
type ObjectResult struct {
	Object       json.RawMessage `json:"object,omitempty"`
	FilterResult json.RawMessage `json:"filterResult,omitempty"`
}

// DecodeObject decodes the object into dst (a struct from k8s.io/api, or
// any type with JSON tags).
func (o ObjectResult) DecodeObject(dst any) error {
	return decodeRaw(o.Object, dst, "object")
}

// DecodeFilterResult decodes the filter result into dst.
func (o ObjectResult) DecodeFilterResult(dst any) error {
	return decodeRaw(o.FilterResult, dst, "filterResult")
}

func decodeRaw(raw json.RawMessage, dst any, what string) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fmt.Errorf("decode %s: absent", what)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// Values is a values document (VALUES_PATH or CONFIG_VALUES_PATH):
// {"global": {...}, "<moduleKey>": {...}}.
type Values map[string]any

// Get returns the value at the keys, and whether it is present.
func (v Values) Get(keys ...string) (any, bool) {
	var cur any = map[string]any(v)
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Decode decodes the value at the keys into dst (a struct with JSON tags,
// a slice, a string...). It reports whether the value is present; an
// absent value leaves dst as it was.
func (v Values) Decode(dst any, keys ...string) (bool, error) {
	val, ok := v.Get(keys...)
	if !ok {
		return false, nil
	}
	data, err := json.Marshal(val)
	if err == nil {
		err = json.Unmarshal(data, dst)
	}
	if err != nil {
		return true, fmt.Errorf("decode values %s: %w", Pointer(keys...), err)
	}
	return true, nil
}

// Input is what one run of a hook receives, and where it records its
// outputs.
type Input struct {
	// Contexts are the binding contexts of the run, oldest first; a
	// combined run has several.
	Contexts []BindingContext
	// Values and ConfigValues are the documents the operator passed.
	Values       Values
	ConfigValues Values
	// ValuesPatch and ConfigValuesPatch collect JSON patch operations on
	// the in-memory values and on the ConfigMap.
	ValuesPatch       *Patch
	ConfigValuesPatch *Patch
	// Objects collects object operations, applied after a successful run.
	Objects *Objects
	// Metrics collects metric operations.
	Metrics *Metrics
	// Logger writes to stderr, which the operator logs line by line.
	Logger *slog.Logger
}

// Snapshot returns the current objects of the named kubernetes binding:
// the snapshot of the last context that carries it, else the objects of
// the last Synchronization of that binding. Nil when neither is present.
func (in *Input) Snapshot(binding string) []ObjectResult {
	for i := len(in.Contexts) - 1; i >= 0; i-- {
		c := in.Contexts[i]
		if s, ok := c.Snapshots[binding]; ok {
			return s
		}
		if c.Binding == binding && c.Type == "Synchronization" {
			return c.Objects
		}
	}
	return nil
}
