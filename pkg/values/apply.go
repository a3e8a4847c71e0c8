package values

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Apply applies the patch to a copy of v and returns the result; v is never
// changed. Numbers in the result are float64, as from FromJSON.
//
// Application is lenient in two ways, both RFC 6902 extensions:
//
//   - add creates missing parent containers (objects, or arrays where the
//     next token is an index), so a hook can write /mod/a/b without first
//     adding /mod/a;
//   - remove of a path that does not exist is not an error, which re-applying
//     accumulated patches on recomputed values depends on.
//
// The reference implementation applied a hook's new patch strictly and only
// ignored missing removes on re-application. Every add/remove patch that
// applies strictly gives the same result here, so existing hooks behave the
// same; patches the reference rejected for a missing path now succeed. A null
// parent counts as missing: add replaces it with an object. Negative array
// indices count from the end, as in the reference. A test op follows RFC 6902
// exactly: its path must exist and hold an equal value.
//
// On failure the error names the op that failed, by 0-based index.
func (p Patch) Apply(v Values) (Values, error) {
	if v == nil {
		v = Values{}
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	// Ops run one at a time, each on the JSON the previous one produced:
	// within one run the library treats a null it set itself differently
	// from a null it parsed, and Compact relies on every op meaning the same
	// wherever it stands. Test ops run here: the library's test panics on
	// arrays holding null.
	for i, op := range p {
		if op.Op == "test" {
			err = testOp(doc, op)
		} else {
			doc, err = applyJSON(op, doc)
		}
		if err != nil {
			return nil, fmt.Errorf("patch op %d: %s %q: %w", i, op.Op, op.Path, err)
		}
	}
	res, err := FromJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("patched values: %w", err)
	}
	return res, nil
}

func applyJSON(op Op, doc []byte) (out []byte, err error) {
	// Hook output reaches the library; a panic there must fail the patch,
	// not the operator.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("json patch library panic: %v", r)
		}
	}()
	raw, err := json.Marshal(Patch{op})
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	jp, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	return jp.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{
		SupportNegativeIndices:   true,
		AllowMissingPathOnRemove: true,
		EnsurePathExistsOnAdd:    true,
	})
}

// testOp checks that op.Path exists in doc and holds a value equal to
// op.Value, comparing both as decoded JSON.
func testOp(doc []byte, op Op) error {
	var node any
	if err := json.Unmarshal(doc, &node); err != nil {
		return fmt.Errorf("decode document: %w", err)
	}
	tokens, err := ParsePointer(op.Path)
	if err != nil {
		return err
	}
	for _, tok := range tokens {
		if node, err = child(node, tok); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(op.Value)
	if err != nil {
		return fmt.Errorf("encode value: %w", err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		return fmt.Errorf("decode value: %w", err)
	}
	if !reflect.DeepEqual(node, want) {
		return errors.New("value differs")
	}
	return nil
}

func child(node any, tok string) (any, error) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[tok]
		if !ok {
			return nil, fmt.Errorf("missing key %q", tok)
		}
		return v, nil
	case []any:
		idx, err := strconv.Atoi(tok)
		if err != nil {
			return nil, fmt.Errorf("%q is not an array index", tok)
		}
		if idx < 0 {
			idx += len(n)
		}
		if idx < 0 || idx >= len(n) {
			return nil, fmt.Errorf("index %s out of range", tok)
		}
		return n[idx], nil
	default:
		return nil, fmt.Errorf("%q is below %s", tok, KindOf(node))
	}
}
