package module

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// SymlinkLoopError is a path under a modules dir that cannot be resolved
// because its symlinks point at each other (or at themselves).
type SymlinkLoopError struct {
	// Path is the path that was looked up.
	Path string
	// Link is the symlink where the loop starts: Path itself or one of its
	// parent directories.
	Link string
	// Target is Link's content.
	Target string
}

func (e *SymlinkLoopError) Error() string {
	if e.Link == e.Path {
		return fmt.Sprintf("%s: symlink loop: it points to %q, which leads back to it", e.Path, e.Target)
	}
	return fmt.Sprintf("%s: symlink loop at %s, which points to %q, which leads back to it", e.Path, e.Link, e.Target)
}

// Unwrap lets errors.Is find syscall.ELOOP.
func (e *SymlinkLoopError) Unwrap() error { return syscall.ELOOP }

// loopError turns err, the error of looking up path, into a
// *SymlinkLoopError when the lookup met a symlink loop; other errors are
// returned as they are.
func loopError(path string, err error) error {
	if !errors.Is(err, syscall.ELOOP) {
		return err
	}
	link := loopLink(path)
	target, _ := os.Readlink(link) // "" when it cannot be read: the error still names the link
	return &SymlinkLoopError{Path: path, Link: link, Target: target}
}

// loopLink returns the first component of path, from the root down, that
// does not resolve because of a loop: the symlink where the loop starts.
// Without one (the loop went away meanwhile) it is path itself.
func loopLink(path string) string {
	var parts []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		parts = append(parts, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if _, err := os.Stat(parts[i]); errors.Is(err, syscall.ELOOP) {
			return parts[i]
		}
	}
	return path
}
