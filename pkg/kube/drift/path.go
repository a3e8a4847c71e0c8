package drift

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pathString spells a path the way Drift.Fields does: fields joined by
// dots, list items as [n] with their position in the manifest, and keys
// that are not plain words (letters, digits, "-" and "_") as ["key"], e.g.
// spec.template.spec.containers[0].image or
// metadata.labels["app.kubernetes.io/name"].
func pathString(path []driftStep) string {
	var b strings.Builder
	for i, step := range path {
		switch {
		case step.isList():
			b.WriteString("[" + strconv.Itoa(step.index) + "]")
		case plainKey(step.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(step.key)
		default:
			b.WriteString("[" + strconv.Quote(step.key) + "]")
		}
	}
	return b.String()
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// parsePath parses a path spelled by pathString. List steps get
// their index; they carry no live item.
func parsePath(s string) ([]driftStep, error) {
	var path []driftStep
	rest := s
	for rest != "" {
		var step driftStep
		var err error
		switch {
		case strings.HasPrefix(rest, "["):
			step, rest, err = parseBracket(rest[1:])
		case strings.HasPrefix(rest, ".") && len(path) > 0:
			step, rest, err = parseKey(rest[1:])
		case len(path) == 0:
			step, rest, err = parseKey(rest)
		default:
			err = errors.New(`want "." or "[" after "]"`)
		}
		if err != nil {
			return nil, fmt.Errorf("field path %q: %w", s, err)
		}
		path = append(path, step)
	}
	return path, nil
}

// parseKey parses a plain field name up to the next "." or "[".
func parseKey(s string) (driftStep, string, error) {
	end := strings.IndexAny(s, ".[")
	if end < 0 {
		end = len(s)
	}
	if end == 0 {
		return driftStep{}, "", errors.New("empty field name")
	}
	return driftField(s[:end]), s[end:], nil
}

// parseBracket parses what follows a "[": an index or a quoted key,
// then "]".
func parseBracket(s string) (driftStep, string, error) {
	if strings.HasPrefix(s, `"`) {
		quoted, err := strconv.QuotedPrefix(s)
		if err != nil {
			return driftStep{}, "", fmt.Errorf("quoted key: %w", err)
		}
		rest, ok := strings.CutPrefix(s[len(quoted):], "]")
		if !ok {
			return driftStep{}, "", errors.New(`missing "]"`)
		}
		key, err := strconv.Unquote(quoted)
		if err != nil {
			return driftStep{}, "", fmt.Errorf("quoted key: %w", err)
		}
		return driftField(key), rest, nil
	}
	digits, rest, ok := strings.Cut(s, "]")
	if !ok {
		return driftStep{}, "", errors.New(`missing "]"`)
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 {
		return driftStep{}, "", fmt.Errorf("list index %q", digits)
	}
	return driftStep{index: i, live: -1}, rest, nil
}
