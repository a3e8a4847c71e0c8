// Package filelimit reads the operator's input files (module definitions,
// values files, OpenAPI schemas, CRDs) with a bound on their size, so an
// oversized file is refused, with an error naming it, before it is loaded
// and parsed: a YAML file takes about nine times its size in memory while
// it is parsed.
package filelimit

import (
	"fmt"
	"io"
	"os"
)

// Default is the largest YAML or JSON input file the operator reads: far
// above any real module.yaml, values.yaml or schema (kilobytes), and above
// the 1.5 MiB that etcd stores in one object, so every CRD that a cluster
// can hold fits.
const Default = 4 << 20

// TooLargeError is a file over the limit.
type TooLargeError struct {
	Path string
	// Size is the file's size in bytes; -1 when it is unknown (not a
	// regular file), only that it is over Limit.
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than %d bytes, over the limit of %d", e.Path, e.Limit, e.Limit)
	}
	return fmt.Sprintf("%s: %d bytes, over the limit of %d", e.Path, e.Size, e.Limit)
}

// ReadFile reads path as os.ReadFile does, unless it holds more than limit
// bytes: then it returns a *TooLargeError, having read at most limit+1 bytes.
// Errors of opening and reading are os.ReadFile's (*fs.PathError, which
// names the file).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
	}
	// The size may grow between Stat and the read: the limit holds anyway.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: -1, Limit: limit}
	}
	return data, nil
}
