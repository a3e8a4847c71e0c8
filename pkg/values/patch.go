package values

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Op is one RFC 6902 JSON patch operation.
type Op struct {
	// Op is one of add, remove, replace, move, copy, test.
	Op string `json:"op"`
	// Path is an RFC 6901 pointer to the target location.
	Path string `json:"path"`
	// From is the source pointer of move and copy; empty otherwise.
	From string `json:"from,omitempty"`
	// Value is the value of add, replace and test; nil is JSON null.
	Value any `json:"value,omitempty"`
}

// Patch is a sequence of operations applied in order.
type Patch []Op

// MarshalJSON encodes the op with exactly the members RFC 6902 defines for
// its kind: "value" (null included) for add, replace and test; "from" for
// move and copy.
func (o Op) MarshalJSON() ([]byte, error) {
	type wire struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		From  string `json:"from,omitempty"`
		Value *any   `json:"value,omitempty"`
	}
	w := wire{Op: o.Op, Path: o.Path}
	if needsFrom(o.Op) {
		w.From = o.From
	}
	if needsValue(o.Op) {
		w.Value = &o.Value
	}
	return json.Marshal(w)
}

func needsValue(op string) bool { return op == "add" || op == "replace" || op == "test" }

func needsFrom(op string) bool { return op == "move" || op == "copy" }

// ParsePatch reads a hook's patch file: empty or whitespace-only input (an
// empty patch), a JSON array of ops, a single op object, or a stream of
// arrays and objects in any mix, as appending with ">>" produces. Every op is
// validated: a known op, valid RFC 6901 pointers in "path" and (for move and
// copy) "from", and "value" present for add, replace and test. Members an op
// does not use are dropped. Errors name the op by its 0-based index across
// the whole stream. A successful result is never nil.
func ParsePatch(data []byte) (Patch, error) {
	patch := Patch{}
	dec := json.NewDecoder(bytes.NewReader(data))
	for item := 0; ; item++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return patch, nil
		}
		if err != nil {
			return nil, fmt.Errorf("patch item %d: %w", item, err)
		}
		switch raw[0] {
		case '{':
			op, err := parseOp(raw)
			if err != nil {
				return nil, fmt.Errorf("patch op %d: %w", len(patch), err)
			}
			patch = append(patch, op)
		case '[':
			var ops []json.RawMessage
			if err := json.Unmarshal(raw, &ops); err != nil {
				return nil, fmt.Errorf("patch item %d: %w", item, err)
			}
			for _, rawOp := range ops {
				op, err := parseOp(rawOp)
				if err != nil {
					return nil, fmt.Errorf("patch op %d: %w", len(patch), err)
				}
				patch = append(patch, op)
			}
		default:
			var v any
			_ = json.Unmarshal(raw, &v) // raw is one valid JSON value
			return nil, fmt.Errorf("patch item %d is %s, want an op object or an array of ops", item, KindOf(v))
		}
	}
}

// parseOp decodes and validates one op. Members are matched case-sensitively,
// as RFC 6902 requires (encoding/json struct decoding would not).
func parseOp(raw json.RawMessage) (Op, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return Op{}, fmt.Errorf("op is %s, want an object", KindOf(v))
		}
		return Op{}, err
	}
	var op Op
	var err error
	if op.Op, err = stringMember(members, "op"); err != nil {
		return Op{}, err
	}
	if !needsValue(op.Op) && !needsFrom(op.Op) && op.Op != "remove" {
		return Op{}, fmt.Errorf("unknown op %q", op.Op)
	}
	if op.Path, err = pointerMember(members, "path"); err != nil {
		return Op{}, fmt.Errorf("%s: %w", op.Op, err)
	}
	if needsFrom(op.Op) {
		if op.From, err = pointerMember(members, "from"); err != nil {
			return Op{}, fmt.Errorf("%s %q: %w", op.Op, op.Path, err)
		}
	}
	if needsValue(op.Op) {
		rawValue, ok := members["value"]
		if !ok {
			return Op{}, fmt.Errorf("%s %q: missing \"value\"", op.Op, op.Path)
		}
		if err := json.Unmarshal(rawValue, &op.Value); err != nil {
			return Op{}, fmt.Errorf("%s %q: value: %w", op.Op, op.Path, err)
		}
	}
	return op, nil
}

func stringMember(members map[string]json.RawMessage, name string) (string, error) {
	raw, ok := members[name]
	if !ok {
		return "", fmt.Errorf("missing %q", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var v any
		_ = json.Unmarshal(raw, &v) // raw is one valid JSON value
		return "", fmt.Errorf("%q is %s, want a string", name, KindOf(v))
	}
	return s, nil
}

func pointerMember(members map[string]json.RawMessage, name string) (string, error) {
	ptr, err := stringMember(members, name)
	if err != nil {
		return "", err
	}
	if _, err := ParsePointer(ptr); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return ptr, nil
}
