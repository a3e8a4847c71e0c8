package operation

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// opFields are the members of one JSON object, looked up by exact name.
type opFields map[string]json.RawMessage

// str returns a string member; absent and null are "".
func (f opFields) str(key string) (string, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s is %s, want a string", key, jsonKindOf(raw))
	}
	return s, nil
}

// boolean returns a boolean member; absent and null are false.
func (f opFields) boolean(key string) (bool, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("%s is %s, want true or false", key, jsonKindOf(raw))
	}
	return b, nil
}

// document returns a required member that may be given inline or as a
// string holding YAML or JSON, always as JSON that is not null.
func (f opFields) document(key string) (json.RawMessage, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return nil, fmt.Errorf("%s is required", key)
	}
	if raw[0] != '"' {
		return raw, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if string(j) == "null" {
		return nil, fmt.Errorf("%s is required", key)
	}
	return j, nil
}

// jsonKindOf names the JSON type of raw for error messages.
func jsonKindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
