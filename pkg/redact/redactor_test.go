package redact

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type stringCase struct {
	name    string
	secrets []string
	in      string
	want    string
}

func TestString(t *testing.T) {
	for _, tt := range append(stringCases(), wordCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			r.Set("test", tt.secrets)
			if diff := cmp.Diff(tt.want, r.String(tt.in)); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// stringCases are the forms String finds secrets in.
func stringCases() []stringCase {
	const key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
	return []stringCase{
		{
			name:    "long value anywhere",
			secrets: []string{"hunter2hunter2"},
			in:      `metadata.labels: Invalid value: "xhunter2hunter2x": must be 63 characters`,
			want:    `metadata.labels: Invalid value: "x[redacted]x": must be 63 characters`,
		},
		{
			name:    "every occurrence",
			secrets: []string{"s3cr3t-t0ken"},
			in:      "s3cr3t-t0ken and s3cr3t-t0ken",
			want:    "[redacted] and [redacted]",
		},
		{
			name:    "quoted with escapes as the API server quotes it",
			secrets: []string{"pa\"ss\nword!"},
			in:      "Invalid value: " + strconv.Quote("pa\"ss\nword!"),
			want:    `Invalid value: "[redacted]"`,
		},
		{
			name:    "JSON escapes",
			secrets: []string{"<script>x&y</script>"},
			in:      `{"v":"\u003cscript\u003ex\u0026y\u003c/script\u003e"}`,
			want:    `{"v":"[redacted]"}`,
		},
		{
			name:    "base64 as in a Secret's data",
			secrets: []string{"correct horse battery"},
			in:      "data: " + base64.StdEncoding.EncodeToString([]byte("correct horse battery")),
			want:    "data: [redacted]",
		},
		{
			name:    "lines of a key",
			secrets: []string{key},
			in:      "cannot parse MIIEvQIBADANBgkqhkiG9w0BAQEFAASC: bad",
			want:    "cannot parse [redacted]: bad",
		},
		{
			name:    "longest secret first",
			secrets: []string{"abcdefgh", "abcdefghijkl"},
			in:      "abcdefghijkl",
			want:    "[redacted]",
		},
	}
}

// wordCases are the thresholds and words String is held to.
func wordCases() []stringCase {
	return []stringCase{
		{
			name:    "short value as a word",
			secrets: []string{"p4ss"},
			in:      `password "p4ss" rejected; p4ss.`,
			want:    `password "[redacted]" rejected; [redacted].`,
		},
		{
			name:    "short value inside a word stays",
			secrets: []string{"p4ss"},
			in:      "p4ssword xp4ss p4ss_x my-p4ss",
			want:    "p4ssword xp4ss p4ss_x my-p4ss",
		},
		{
			name:    "short value next to a longer word of itself",
			secrets: []string{"abcd"},
			in:      "abcdabcd abcd",
			want:    "abcdabcd [redacted]",
		},
		{
			name:    "too short",
			secrets: []string{"abc", "1", ""},
			in:      "abc 1 x",
			want:    "abc 1 x",
		},
		{
			name:    "common words",
			secrets: []string{"true", "Password", "default"},
			in:      "enabled: true; password: default",
			want:    "enabled: true; password: default",
		},
		{
			name:    "nothing to redact",
			secrets: nil,
			in:      "module foo: helm: failed",
			want:    "module foo: helm: failed",
		},
		{
			name:    "unicode neighbours",
			secrets: []string{"кот"},
			in:      "котик кот",
			want:    "котик [redacted]",
		},
	}
}

func TestSources(t *testing.T) {
	r := New()
	r.Set("module/a", []string{"alpha-secret-1"})
	r.Set("module/b", []string{"bravo-secret-2"})
	in := "alpha-secret-1 bravo-secret-2"
	if got, want := r.String(in), "[redacted] [redacted]"; got != want {
		t.Fatalf("both sources: got %q, want %q", got, want)
	}
	r.Set("module/a", []string{"alpha-secret-3"})
	if got, want := r.String(in), "alpha-secret-1 [redacted]"; got != want {
		t.Errorf("after replacing a's values: got %q, want %q", got, want)
	}
	r.Forget(func(s string) bool { return strings.HasPrefix(s, "module/b") })
	if got, want := r.String(in), in; got != want {
		t.Errorf("after forgetting b: got %q, want %q", got, want)
	}
	r.Set("module/a", nil)
	if n := r.Len(); n != 0 {
		t.Errorf("Len after clearing every source = %d, want 0", n)
	}
}

func TestNil(t *testing.T) {
	var r *Redactor
	r.Set("x", []string{"secret-value"})
	r.Forget(func(string) bool { return true })
	if got := r.String("secret-value"); got != "secret-value" {
		t.Errorf("nil Redactor changed the text: %q", got)
	}
	if r.Len() != 0 {
		t.Error("nil Redactor holds values")
	}
	var zero Redactor
	zero.Set("x", []string{"secret-value"})
	if got := zero.String("a secret-value"); got != "a [redacted]" {
		t.Errorf("zero Redactor: got %q", got)
	}
}

func TestStrings(t *testing.T) {
	r := New()
	r.Set("s", []string{"0123456789"})
	got := r.Strings([]string{"a 0123456789", "b"})
	if diff := cmp.Diff([]string{"a [redacted]", "b"}, got); diff != "" {
		t.Error(diff)
	}
}

// TestConcurrent runs under -race: sources change while texts are
// redacted.
func TestConcurrent(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 100 {
				r.Set(fmt.Sprint("s", i), []string{fmt.Sprintf("secret-%d-%d", i, j)})
				_ = r.String("secret-1-50 secret-2-99")
			}
		})
	}
	wg.Wait()
	if got := r.String("secret-3-99"); got != Marker {
		t.Errorf("last value of a source: got %q", got)
	}
}

func BenchmarkString(b *testing.B) {
	r := New()
	vals := make([]string, 2000)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret-value-%06d", i)
	}
	r.Set("many", vals)
	msg := strings.Repeat("module foo: helm: apply release \"foo\": Secret \"x\" is invalid: ", 20) + "secret-value-001999"
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(msg)
	}
}
