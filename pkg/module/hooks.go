package module

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// isSkippedHookDir reports whether a directory named name holds helpers and
// interpreters, never hooks.
func isSkippedHookDir(name string) bool {
	switch name {
	case "lib", "venv":
		return true
	}
	return false
}

// isNotHookExt reports whether ext marks files that sit next to hooks but are
// never hooks (configs, docs), whatever their mode; they are skipped without a
// warning.
func isNotHookExt(ext string) bool {
	switch ext {
	case ".yaml", ".yml", ".json", ".md", ".txt":
		return true
	}
	return false
}

// hookFinder collects hook executables under one root.
type hookFinder struct {
	log     *slog.Logger
	walking map[string]bool // real paths of the directories being walked, against symlink loops
	found   []string
}

// findHooks returns the sorted paths of the executables under root. A
// missing root yields no hooks; a root that is not a directory is warned
// about. Directories named lib or venv and hidden entries are skipped;
// symlinks are followed (broken ones and loops are warned about); a
// non-executable regular file is warned about unless its extension says it
// is not a hook.
func findHooks(root string, log *slog.Logger) ([]string, error) {
	info, err := statOptional(root)
	if err != nil || info == nil {
		return nil, err
	}
	if !info.IsDir() {
		log.Warn("hooks path is not a directory", slog.String(logkey.Path, root))
		return nil, nil
	}
	f := &hookFinder{log: log, walking: map[string]bool{}}
	if err := f.walk(root); err != nil {
		return nil, err
	}
	slices.Sort(f.found)
	return f.found, nil
}

func (f *hookFinder) walk(dir string) error {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolve hooks dir: %w", loopError(dir, err))
	}
	if f.walking[resolved] {
		f.log.Warn("symlink loop in hooks skipped", slog.String(logkey.Path, dir))
		return nil
	}
	f.walking[resolved] = true
	defer delete(f.walking, resolved)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read hooks dir: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := f.visit(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (f *hookFinder) visit(path string) error {
	info, err := statOptional(path)
	if err != nil {
		return err
	}
	base := filepath.Base(path)
	switch {
	case info == nil:
		f.log.Warn("broken symlink in hooks ignored", slog.String(logkey.Path, path))
	case info.IsDir():
		if !isSkippedHookDir(base) {
			return f.walk(path)
		}
	case !info.Mode().IsRegular(), isNotHookExt(filepath.Ext(base)):
	case info.Mode().Perm()&0o111 == 0:
		f.log.Warn("hook file is not executable, ignored", slog.String(logkey.Hook, path))
	default:
		f.found = append(f.found, path)
	}
	return nil
}
