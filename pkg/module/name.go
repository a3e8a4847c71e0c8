package module

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// orderedDirRe splits "NNN-name" into its order and name.
var orderedDirRe = regexp.MustCompile(`^(\d+)-(.+)$`)

// reservedName cannot be a module name: its key would be the global values key.
const reservedName = "global"

// KeyFor returns the camelCase values key of a kebab-case module name:
// every letter after a dash is upper-cased and the dashes are dropped
// ("cert-manager" -> "certManager"). It does not validate the name.
func KeyFor(name string) string {
	parts := strings.Split(name, "-")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		r, size := utf8.DecodeRuneInString(p)
		if size == 0 {
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(p[size:])
	}
	return b.String()
}

// NameFor returns the kebab-case module name of a camelCase values key:
// every upper-case letter becomes a dash and its lower-case form, except at
// the start ("certManager" -> "cert-manager"). It does not validate the key.
func NameFor(key string) string {
	var b strings.Builder
	for i, r := range key {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ValidName reports whether name is a valid module name: non-empty, only
// a-z, 0-9 and dashes, and NameFor(KeyFor(name)) == name. Equivalently,
// dash-separated words where every word but the first starts with a letter
// ("cert-manager", "ingress-nginx2"; not "module-2", "a--b", "Foo").
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return NameFor(KeyFor(name)) == name
}

// NameError reports a module directory whose name is not a valid module
// name. Discover returns it (possibly joined with others) for errors.As.
type NameError struct {
	Dir        string // absolute path of the module directory
	Name       string // the directory name without its NNN- prefix
	Suggestion string // a valid module name close to Name
}

func (e *NameError) Error() string {
	return fmt.Sprintf("module dir %q: name %q is not kebab-case that round-trips through camelCase, rename it to %q",
		e.Dir, e.Name, e.Suggestion)
}

// parseDirName splits a module directory's base name into the module name
// and order, and validates the name. dir is the full path, for errors.
func parseDirName(dir, base string, unnumberedOrder int) (candidate, error) {
	c := candidate{name: base, order: unnumberedOrder, path: dir}
	if m := orderedDirRe.FindStringSubmatch(base); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return candidate{}, fmt.Errorf("module dir %q: order prefix: %w", dir, err)
		}
		c.name, c.order, c.numbered = m[2], n, true
	}
	if !ValidName(c.name) {
		return candidate{}, &NameError{Dir: dir, Name: c.name, Suggestion: suggestName(c.name)}
	}
	if c.name == reservedName {
		return candidate{}, fmt.Errorf("module dir %q: name %q is reserved for global values", dir, c.name)
	}
	return c, nil
}

// suggestName derives a valid module name from an invalid one: words are
// split at separators and at lower-to-upper case changes, lower-cased, and
// joined by dashes; a word starting with a digit is glued to the previous one
// because a dash before a digit does not survive camelCase.
func suggestName(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	afterLower := false
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			if afterLower {
				flush()
			}
			cur = append(cur, unicode.ToLower(r))
			afterLower = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			cur = append(cur, r)
			afterLower = true
		default:
			flush()
			afterLower = false
		}
	}
	flush()
	var b strings.Builder
	for i, w := range words {
		if i > 0 && (w[0] < '0' || w[0] > '9') {
			b.WriteByte('-')
		}
		b.WriteString(w)
	}
	switch b.String() {
	case "":
		return "module"
	case reservedName:
		return reservedName + "-module"
	}
	return b.String()
}
