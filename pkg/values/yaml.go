package values

import (
	"fmt"
	"math"
	"strconv"

	yaml11 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
)

// DecodeYAML decodes the first YAML document of data with YAML 1.2 core
// schema rules into a JSON-compatible tree: maps with string keys, []any,
// strings, float64 numbers, booleans and nil. Only true and false (also
// True, TRUE, False, FALSE) are booleans; on, off, yes, no, y and n stay
// strings, as a user reading the document expects. Anchors, aliases and
// merge keys work. Every number becomes float64, as when YAML is converted
// to JSON first (Helm's way), so callers see the same types as for JSON.
// Scalar map keys are their text ("y" stays "y", True stays "True").
// Timestamps stay strings as written. Syntax errors name the line, a key
// given twice names both lines, and a value JSON cannot hold (.inf, .nan)
// is an error naming its path. Empty input, or only comments, yields nil.
func DecodeYAML(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	if doc.Kind == 0 {
		return nil, nil // empty, or only comments
	}
	scalarsAsText(&doc)
	var tree any
	if err := doc.Decode(&tree); err != nil {
		return nil, err
	}
	return toJSONTree(tree, "")
}

// scalarsAsText retags as strings, under n, every timestamp (so it decodes
// to its text, not a time.Time) and every scalar map key but the merge key
// (so True: stays "True" and 1.50: stays "1.50").
func scalarsAsText(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!timestamp" {
		n.Tag = "!!str"
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
				k.Tag = "!!str"
			}
		}
	}
	for _, c := range n.Content {
		scalarsAsText(c)
	}
}

// syntaxError returns the YAML 1.1 parser's error for data when it has one,
// else err. The two parsers share the grammar (they differ only in how plain
// scalars resolve), but the 1.2 parser reports some syntax errors, such as
// an unclosed flow collection or quote, one line too early; the 1.1 parser
// names the right line. Errors only the 1.2 decoder finds (a duplicate key)
// keep its message.
func syntaxError(data []byte, err error) error {
	var tree any
	if err11 := yaml11.Unmarshal(data, &tree); err11 != nil {
		return err11
	}
	return err
}

func toJSONTree(v any, path string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			c, err := toJSONTree(val, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			key, err := keyString(k, path)
			if err != nil {
				return nil, err
			}
			c, err := toJSONTree(val, joinPath(path, key))
			if err != nil {
				return nil, err
			}
			out[key] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			c, err := toJSONTree(val, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return float64(t), nil
	case int64:
		return float64(t), nil
	case uint64:
		return float64(t), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("%s: %v is not a JSON number", pathName(path), t)
		}
		return t, nil
	case nil, bool, string:
		return t, nil
	default:
		return nil, fmt.Errorf("%s: unsupported YAML value of type %T", pathName(path), t)
	}
}

// keyString is the text of a scalar map key.
func keyString(k any, path string) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(t), nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	default:
		return "", fmt.Errorf("%s: map key of type %T, want a scalar", pathName(path), k)
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathName(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}
