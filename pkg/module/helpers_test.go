package module

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// node is one entry of a test tree.
type node struct {
	data string
	mode os.FileMode // 0 means 0o644 for files
	link string      // symlink target when set
	dir  bool
}

func file(data string) node  { return node{data: data} }
func script() node           { return node{data: "#!/bin/sh\n", mode: 0o755} }
func symlink(to string) node { return node{link: to} }
func dir() node              { return node{dir: true} }

// writeTree creates the entries under root in path order, so that a symlink
// may point at an entry created before it.
func writeTree(t *testing.T, root string, entries map[string]node) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(entries)) {
		n := entries[p]
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o750); err != nil {
			t.Fatal(err)
		}
		switch {
		case n.dir:
			if err := os.MkdirAll(full, 0o750); err != nil {
				t.Fatal(err)
			}
		case n.link != "":
			if err := os.Symlink(n.link, full); err != nil {
				t.Fatal(err)
			}
		default:
			m := n.mode
			if m == 0 {
				m = 0o644
			}
			if err := os.WriteFile(full, []byte(n.data), m); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(full, m); err != nil { // umask-proof
				t.Fatal(err)
			}
		}
	}
}

// logCapture records log lines as JSON in a buffer.
type logCapture struct {
	buf  bytes.Buffer
	root string
}

func newLogCapture(root string) (*logCapture, *slog.Logger) {
	c := &logCapture{root: root}
	h := slog.NewJSONHandler(&c.buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
	return c, slog.New(h)
}

// records returns the logged lines with the root prefix of every string
// value replaced by "$ROOT".
func (c *logCapture) records(t *testing.T) []map[string]string {
	t.Helper()
	var out []map[string]string
	for line := range strings.Lines(c.buf.String()) {
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		rec := map[string]string{}
		for k, v := range raw {
			s, ok := v.(string)
			if !ok {
				t.Fatalf("log line %q: key %q is not a string", line, k)
			}
			rec[k] = strings.ReplaceAll(s, c.root, "$ROOT")
		}
		out = append(out, rec)
	}
	return out
}

// warn builds an expected warning record from key/value pairs.
func warn(msg string, kv ...string) map[string]string {
	rec := map[string]string{"level": "WARN", "msg": msg}
	for i := 0; i+1 < len(kv); i += 2 {
		rec[kv[i]] = kv[i+1]
	}
	return rec
}
