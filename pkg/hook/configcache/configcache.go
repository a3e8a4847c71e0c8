// Package configcache remembers what hook files printed for --config, so
// that a file whose content has not changed is not run again.
package configcache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Cache remembers what hooks printed for --config, by path, content
// and environment: a hook whose file is unchanged is not started again in
// the same process (a standby that becomes the leader loads every hook a
// second time), and loads of one file that overlap share one run. A file
// whose content changed misses and runs; only the last content of each
// path is remembered. The same content at another path runs too: what a
// hook prints may depend on its path ($0) and on the files beside it.
// What the file runs (its interpreter, the files it sources) is not looked
// at. Failed runs are not remembered. The zero value is ready to use and
// safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	// byPath holds the last output of each path, with the key it was
	// printed for: one entry a hook file, whatever its edits.
	byPath map[string]configEntry
	runs   singleflight.Group
}

// configEntry is what a hook file printed, and for which key.
type configEntry struct {
	key configKey
	out []byte
}

// configKey is a hook file run with an environment: the file's path,
// the SHA-256 of its content and that of the environment.
type configKey struct {
	path string
	sum  [sha256.Size]byte
	env  [sha256.Size]byte
}

// fileKey hashes the file at path and env.
func fileKey(path string, env []string) (configKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return configKey{}, fmt.Errorf("read hook: %w", err)
	}
	return configKey{path: path, sum: sha256.Sum256(data), env: sha256.Sum256([]byte(strings.Join(env, "\x00")))}, nil
}

// Get returns the remembered output of the file at path run with env, or
// else that of run, remembered when the file still has the content it had before the
// run (a file rewritten meanwhile is asked again next time). A file that
// cannot be read is run every time.
func (c *Cache) Get(path string, env []string, run func() ([]byte, error)) ([]byte, error) {
	key, err := fileKey(path, env)
	if err != nil {
		// An executable the operator may not read (mode 0111) still runs;
		// a missing one fails as its run does.
		return run()
	}
	if out, ok := c.lookup(key); ok {
		return slices.Clone(out), nil
	}
	v, err, _ := c.runs.Do(path+"\x00"+string(key.sum[:])+string(key.env[:]), func() (any, error) {
		// A run that ended since the look above has remembered it.
		if out, ok := c.lookup(key); ok {
			return out, nil
		}
		out, err := run()
		if err != nil {
			return nil, err
		}
		if after, err := fileKey(path, env); err == nil && after == key {
			c.mu.Lock()
			if c.byPath == nil {
				c.byPath = map[string]configEntry{}
			}
			c.byPath[path] = configEntry{key: key, out: out}
			c.mu.Unlock()
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return slices.Clone(v.([]byte)), nil
}

// lookup returns the output remembered for key.
func (c *Cache) lookup(key configKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byPath[key.path]
	if !ok || e.key != key {
		return nil, false
	}
	return e.out, true
}
