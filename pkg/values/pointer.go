package values

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePointer splits an RFC 6901 JSON pointer into unescaped reference
// tokens. The empty pointer "" addresses the whole document and yields no
// tokens; "/" yields one empty token.
func ParsePointer(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with \"/\"", ptr)
	}
	tokens := strings.Split(ptr[1:], "/")
	for i, tok := range tokens {
		if !strings.Contains(tok, "~") {
			continue
		}
		for j := 0; j < len(tok); j++ {
			if tok[j] == '~' && (j+1 == len(tok) || (tok[j+1] != '0' && tok[j+1] != '1')) {
				return nil, fmt.Errorf("pointer %q has \"~\" not followed by 0 or 1", ptr)
			}
		}
		tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
	}
	return tokens, nil
}

// plainTokens reports whether every token names an object member
// unambiguously: not empty (the patch library resolves "" to the containing
// node) and not usable as an array index ("-" or an integer).
func plainTokens(tokens []string) bool {
	if len(tokens) == 0 {
		return false
	}
	for _, tok := range tokens {
		if tok == "" || tok == "-" {
			return false
		}
		if _, err := strconv.Atoi(tok); err == nil {
			return false
		}
	}
	return true
}

// hasPrefix reports whether tokens starts with prefix.
func hasPrefix(tokens, prefix []string) bool {
	if len(prefix) > len(tokens) {
		return false
	}
	for i := range prefix {
		if tokens[i] != prefix[i] {
			return false
		}
	}
	return true
}

// related reports whether one pointer is equal to or an ancestor of the other.
func related(a, b []string) bool {
	return hasPrefix(a, b) || hasPrefix(b, a)
}
