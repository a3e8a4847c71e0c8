package cel

import (
	"errors"
	"fmt"
	"strings"
)

// normalizeFieldPath checks a rule's fieldPath against the schema of the
// rule's place, as the API server does when a CRD is written: a path of
// `.name` and `['name']` steps (no list indices), each naming a property
// the schema declares, or any key of an additionalProperties map. It
// returns the steps joined with dots, the form violation paths take.
func normalizeFieldPath(doc map[string]any, fieldPath string) (string, error) {
	steps, err := fieldPathSteps(fieldPath)
	if err != nil {
		return "", fmt.Errorf("fieldPath %q: %w", fieldPath, err)
	}
	at := doc
	for _, step := range steps {
		props, _ := at["properties"].(map[string]any)
		if sub, ok := props[step].(map[string]any); ok {
			at = sub
			continue
		}
		if sub, ok := at["additionalProperties"].(map[string]any); ok {
			at = sub
			continue
		}
		return "", fmt.Errorf("fieldPath %q: the schema has no property %q there", fieldPath, step)
	}
	return strings.Join(steps, "."), nil
}

// fieldPathSteps splits `.a['b.c'].d` into a, b.c, d.
func fieldPathSteps(fp string) ([]string, error) {
	var steps []string
	for rest := fp; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "['"):
			name, tail, err := quotedStep(rest[2:])
			if err != nil {
				return nil, err
			}
			steps, rest = append(steps, name), tail
		case rest[0] == '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, errors.New("an empty step")
			}
			steps, rest = append(steps, rest[:end]), rest[end:]
		default:
			return nil, fmt.Errorf("a step at %q starts with neither '.' nor \"['\"", rest)
		}
	}
	if len(steps) == 0 {
		return nil, errors.New("no step")
	}
	return steps, nil
}

// quotedStep reads a quoted name up to its closing `']`, with `\'` and
// `\\` escapes.
func quotedStep(s string) (name, rest string, err error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case s[i] == '\'':
			if !strings.HasPrefix(s[i:], "']") {
				return "", "", errors.New("a quoted step not closed by \"']\"")
			}
			return b.String(), s[i+2:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", errors.New("an unterminated quoted step")
}
