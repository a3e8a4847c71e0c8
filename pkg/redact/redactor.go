// Package redact removes secret values from texts that leave the process:
// module status, Events, the status page, webhook answers and log lines.
//
// A Redactor holds the secrets of several sources (a module's sensitive
// values, the Secrets of its rendered release, the Secrets a hook's
// binding watches), each replaced as a whole when its source changes, and
// replaces every occurrence of any of them in a text with Marker.
//
// What counts as an occurrence is a trade between safety and readable
// messages:
//
//   - a value shorter than MinLen bytes is never redacted: "1", "on" or
//     "abc" occur in every message and cannot be told from it;
//   - a value that is a common word of configurations and messages (true,
//     false, null, default, secret, password...) is never redacted, for
//     the same reason;
//   - a value shorter than WordLen bytes is redacted only where it stands
//     as a word of its own (its neighbours are not letters, digits, '_' or
//     '-'), so that the secret "abcd" does not cut "abcdef" in two;
//   - a longer value is redacted wherever it occurs.
//
// Each value is also looked for in the forms error texts quote it in: Go
// and JSON string escapes (the API server quotes invalid values with %q),
// base64 (a Secret's data), and, for a value of several lines (a key, a
// certificate), each of its lines of WordLen bytes or more.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Marker replaces every secret found.
const Marker = "[redacted]"

// Thresholds of what is redacted; see the package comment.
const (
	// MinLen is the length in bytes below which a value is never redacted.
	MinLen = 4
	// WordLen is the length in bytes below which a value is redacted only
	// as a whole word.
	WordLen = 8
)

// commonWords are values never redacted: words that texts use on their
// own (a secret "true" would turn every boolean of a message into the
// marker). Compared in lower case.
var commonWords = map[string]bool{ //nolint:gochecknoglobals // a constant set
	"true": true, "false": true, "null": true, "none": true, "nil": true, "yes": true,
	"default": true, "enabled": true, "disabled": true, "empty": true, "unknown": true,
	"error": true, "value": true, "values": true, "invalid": true, "required": true,
	"secret": true, "secrets": true, "password": true, "token": true, "data": true,
	"name": true, "namespace": true, "module": true, "release": true, "string": true,
	"object": true, "redacted": true, "changeme": true,
}

// Redactor replaces secrets in texts. The zero value and nil redact
// nothing. It is safe for concurrent use: sources are set from module
// runs and watches while texts are redacted on request goroutines.
type Redactor struct {
	mu      sync.Mutex
	sources map[string][]string // source -> its values as given
	m       *matcher            // compiled from sources; nil when stale
}

// New returns a Redactor with no secrets.
func New() *Redactor { return &Redactor{} }

// Set makes values the secrets of source, replacing what source had.
// Values too short or too common to redact are dropped; an empty list
// forgets the source.
func (r *Redactor) Set(source string, values []string) {
	if r == nil {
		return
	}
	kept := make([]string, 0, len(values))
	for _, v := range values {
		if eligible(v) {
			kept = append(kept, v)
		}
	}
	slices.Sort(kept)
	kept = slices.Compact(kept)
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(r.sources[source], kept) {
		return
	}
	if r.sources == nil {
		r.sources = map[string][]string{}
	}
	if len(kept) == 0 {
		delete(r.sources, source)
	} else {
		r.sources[source] = kept
	}
	r.m = nil
}

// Forget removes the secrets of every source for which drop is true, e.g.
// those of a module that was removed.
func (r *Redactor) Forget(drop func(source string) bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.sources)
	maps.DeleteFunc(r.sources, func(k string, _ []string) bool { return drop(k) })
	if len(r.sources) != n {
		r.m = nil
	}
}

// Len is how many distinct values the Redactor holds, for tests and
// metrics.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	return len(r.matcher().forms)
}

// String returns s with every secret replaced by Marker.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" {
		return s
	}
	return r.matcher().replace(s)
}

// Strings redacts every element of ss in place and returns ss.
func (r *Redactor) Strings(ss []string) []string {
	for i := range ss {
		ss[i] = r.String(ss[i])
	}
	return ss
}

// matcher returns the compiled secrets, compiling them after a change.
func (r *Redactor) matcher() *matcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		var all []string
		for _, vs := range r.sources {
			all = append(all, vs...)
		}
		r.m = compile(all)
	}
	return r.m
}

// eligible reports whether v may be redacted at all.
func eligible(v string) bool {
	return len(strings.TrimSpace(v)) >= MinLen && !commonWords[strings.ToLower(strings.TrimSpace(v))]
}

// matcher finds the forms of a set of secrets: the long ones anywhere, the
// short ones as words.
type matcher struct {
	forms    []string // every form, longest first
	anywhere *strings.Replacer
	words    []string // forms shorter than WordLen, longest first
}

func compile(values []string) *matcher {
	set := map[string]bool{}
	for _, v := range values {
		for _, f := range forms(v) {
			if eligible(f) {
				set[f] = true
			}
		}
	}
	m := &matcher{forms: slices.SortedFunc(maps.Keys(set), longestFirst)}
	var pairs []string
	for _, f := range m.forms {
		if len(f) < WordLen {
			m.words = append(m.words, f)
			continue
		}
		// Replacer prefers the earlier of two forms matching at one
		// place: longest first, so a secret containing another goes whole.
		pairs = append(pairs, f, Marker)
	}
	if len(pairs) > 0 {
		m.anywhere = strings.NewReplacer(pairs...)
	}
	return m
}

func longestFirst(a, b string) int {
	return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
}

// forms returns v as error texts may quote it.
func forms(v string) []string {
	out := []string{v, strings.TrimSpace(v)}
	if q := strconv.Quote(v); len(q) > 2 {
		out = append(out, q[1:len(q)-1])
	}
	if j, err := json.Marshal(v); err == nil && len(j) > 2 {
		out = append(out, string(j[1:len(j)-1]))
	}
	out = append(out, base64.StdEncoding.EncodeToString([]byte(v)))
	if strings.Contains(v, "\n") {
		for line := range strings.Lines(v) {
			if line = strings.TrimSpace(line); len(line) >= WordLen {
				out = append(out, line)
			}
		}
	}
	return out
}

func (m *matcher) replace(s string) string {
	if m.anywhere != nil {
		s = m.anywhere.Replace(s)
	}
	for _, w := range m.words {
		s = replaceWord(s, w)
	}
	return s
}

// replaceWord replaces the occurrences of w in s that stand as words.
func replaceWord(s, w string) string {
	var b strings.Builder
	done := 0 // s[:done] is written to b, or nothing is replaced yet
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			break
		}
		i += from
		end := i + len(w)
		if !wordByteBefore(s, i) && !wordByteAfter(s, end) {
			b.WriteString(s[done:i])
			b.WriteString(Marker)
			done = end
		}
		from = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

func wordByteBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

func wordByteAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(r)
}

func isWordRune(r rune) bool {
	return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
