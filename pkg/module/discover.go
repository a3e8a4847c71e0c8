package module

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// DefaultUnnumberedOrder is the order the reference implementation gives to
// module directories without an NNN- prefix.
const DefaultUnnumberedOrder = 1

// Options say where Discover looks.
type Options struct {
	// ModulesDirs are scanned in order; a module name found in an earlier
	// dir shadows the same name in a later one. Each dir must exist.
	ModulesDirs []string
	// GlobalHooksDir holds global hooks (in its hooks/ subdirectory if that
	// exists, else in itself) and global schemas in openapi/. Empty or
	// missing means no global hooks; an existing non-directory is an error.
	GlobalHooksDir string
	// UnnumberedOrder is the order of module dirs without an NNN- prefix,
	// used as given (zero is a valid order); callers wanting the reference
	// behaviour set DefaultUnnumberedOrder.
	UnnumberedOrder int
	// Logger receives warnings about ignored entries; nil discards them.
	Logger *slog.Logger
	// KubernetesVersion is the cluster's version ("v1.31.2"), against
	// which module.yaml's requirements.kubernetes is checked; "" leaves
	// that requirement unchecked.
	KubernetesVersion string
}

// SplitDirs splits a ':'-separated list of directories, trimming spaces and
// dropping empty elements.
func SplitDirs(s string) []string {
	var dirs []string
	for d := range strings.SplitSeq(s, ":") {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Discover reads the modules dirs and the global hooks dir. It runs nothing:
// hooks and enabled scripts are only located. Every child directory (or
// symlink to one) of a modules dir is a module; hidden entries are skipped,
// other entries except values.yaml are warned about.
//
// A module whose directory, values.yaml or module.yaml cannot be read, or
// whose module.yaml requirements are not met, is discovered all the same,
// with the reason in its Err: it fails alone, the others run. Invalid
// directory names, common values.yaml files, cycles of requirements and
// the global hooks dir are errors of the whole discovery, reported
// together, joined; such an error yields a nil Set.
func Discover(opts Options) (*Set, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dirs, err := absDirs(opts.ModulesDirs)
	if err != nil {
		return nil, err
	}
	common, err := readCommonValues(dirs)
	if err != nil {
		return nil, err
	}
	set := &Set{byName: map[string]*Module{}}
	if set.globalStatic, err = common.section(globalKey); err != nil {
		return nil, err
	}
	cands, err := scanModulesDirs(dirs, opts.UnnumberedOrder, log)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		m, err := loadModule(c, log)
		if err == nil {
			err = m.applyCommon(common)
		}
		if err != nil {
			// This module alone fails: the others are discovered and run.
			m = brokenModule(c, err)
		}
		set.modules = append(set.modules, m)
		set.byName[m.name] = m
	}
	if err := checkRequires(set.byName, opts.KubernetesVersion); err != nil {
		return nil, err
	}
	for _, m := range set.modules {
		if m.err != nil {
			log.Error("module cannot run", slog.String(logkey.Module, m.name), logkey.Err(m.err))
		}
	}
	slices.SortFunc(set.modules, func(a, b *Module) int {
		return cmp.Or(cmp.Compare(a.order, b.order), strings.Compare(a.name, b.name))
	})
	if set.global, err = discoverGlobal(opts.GlobalHooksDir, log); err != nil {
		return nil, err
	}
	return set, nil
}

func (m *Module) applyCommon(c commonValues) error {
	var err error
	if m.commonValues, err = c.section(m.key); err != nil {
		return err
	}
	m.commonEnabled, err = c.enabled(m.key)
	return err
}

// absDirs makes dirs absolute and drops repeated ones.
func absDirs(dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("modules dir %q: %w", d, err)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

// scanModulesDirs lists the module directories of every modules dir,
// keeping the first of each name. Invalid names are collected and returned
// joined, so that one run reports them all.
func scanModulesDirs(dirs []string, unnumberedOrder int, log *slog.Logger) ([]candidate, error) {
	var cands []candidate
	var errs []error
	seen := map[string]string{} // name -> path of the module kept
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("read modules dir: %w", loopError(dir, err))
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			ok, err := isModuleDir(path, log)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			c, err := parseDirName(path, e.Name(), unnumberedOrder)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			name := c.name
			if kept, dup := seen[name]; dup {
				log.Warn("duplicate module dir ignored", slog.String(logkey.Module, name), slog.String(logkey.Path, path),
					slog.String(logkey.Reason, "kept "+kept))
				continue
			}
			seen[name] = path
			cands = append(cands, c)
		}
	}
	return cands, errors.Join(errs...)
}

// isModuleDir reports whether an entry of a modules dir is a module
// directory, warning about entries that are neither that, hidden, nor the
// common values.yaml.
func isModuleDir(path string, log *slog.Logger) (bool, error) {
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") {
		return false, nil
	}
	info, err := statOptional(path)
	switch {
	case err != nil:
		return false, err
	case info == nil:
		log.Warn("broken symlink in modules dir ignored", slog.String(logkey.Path, path))
		return false, nil
	case info.IsDir():
		return true, nil
	case base != valuesFileName && !isNotHookExt(filepath.Ext(base)):
		// Documentation (README.md and the like) is expected here.
		log.Warn("file in modules dir ignored", slog.String(logkey.Path, path))
	}
	return false, nil
}

// discoverGlobal locates the global hooks and schemas.
func discoverGlobal(dir string, log *slog.Logger) (*Global, error) {
	if dir == "" {
		return &Global{}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("global hooks dir %q: %w", dir, err)
	}
	info, err := statOptional(abs)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return &Global{}, nil
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("global hooks dir %q is not a directory", abs)
	}
	g := &Global{path: abs, hooksDir: abs}
	sub := filepath.Join(abs, hooksDirName)
	hasSub, err := isDir(sub)
	if err != nil {
		return nil, err
	}
	if hasSub {
		g.hooksDir = sub
	}
	if g.hooks, err = findHooks(g.hooksDir, log); err != nil {
		return nil, err
	}
	if g.configSchemaPath, err = optionalFile(filepath.Join(abs, configSchemaFile)); err != nil {
		return nil, err
	}
	if g.valuesSchemaPath, err = optionalFile(filepath.Join(abs, valuesSchemaFile)); err != nil {
		return nil, err
	}
	return g, nil
}
