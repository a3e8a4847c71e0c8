package module

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

const (
	enabledFileName  = "enabled"
	hooksDirName     = "hooks"
	configSchemaFile = "openapi/config-values.yaml"
	valuesSchemaFile = "openapi/values.yaml"
)

// candidate is a module directory accepted by the modules dir scan.
type candidate struct {
	name     string
	order    int
	numbered bool // order comes from an NNN- prefix
	path     string
}

// loadModule reads one module directory into a descriptor. Common values
// are filled in by the caller. Warnings about its module.yaml are logged
// here, once.
func loadModule(c candidate, log *slog.Logger) (*Module, error) {
	m := &Module{name: c.name, key: KeyFor(c.name), order: c.order, path: c.path}
	log = log.With(slog.String(logkey.Module, c.name))
	var err error
	if m.def, m.warnings, err = readDefinition(c.path, c.name); err != nil {
		// The rest of the directory is read all the same: its values.yaml
		// still says whether it is enabled, so that a module.yaml broken
		// by an update does not get its release deleted.
		return m.loadWithoutDefinition(c, err, log)
	}
	for _, w := range m.warnings {
		log.Warn("module definition", slog.String(logkey.Reason, w), slog.String(logkey.Path, filepath.Join(c.path, DefinitionFile)))
	}
	if m.def != nil && m.def.Remediation != nil {
		m.remediation = Remediation{Strategy: m.def.Remediation.Strategy, Retries: m.def.Remediation.Retries}
	}
	if m.def != nil && m.def.Weight != nil {
		if c.numbered && c.order != *m.def.Weight {
			return nil, fmt.Errorf("directory prefix %d and %s weight %d disagree: keep one", c.order, DefinitionFile, *m.def.Weight)
		}
		m.order = *m.def.Weight
	}
	if err := m.loadRest(c, log); err != nil {
		return nil, err
	}
	return m, nil
}

// loadWithoutDefinition reads what a module directory has besides its
// module.yaml, which defErr says cannot be read: the module is returned
// with defErr as its Err, and nothing of it runs.
func (m *Module) loadWithoutDefinition(c candidate, defErr error, log *slog.Logger) (*Module, error) {
	if err := m.loadRest(c, log); err != nil {
		return nil, errors.Join(defErr, err)
	}
	m.err = defErr
	return m, nil
}

// loadRest reads the module directory except module.yaml.
func (m *Module) loadRest(c candidate, log *slog.Logger) error {
	var err error
	if m.hasChartYAML, err = isRegular(filepath.Join(c.path, "Chart.yaml")); err != nil {
		return err
	}
	if m.hasChartYAML {
		m.chartVersion = readChartVersion(filepath.Join(c.path, "Chart.yaml"))
	}
	if m.hasTemplates, err = isDir(filepath.Join(c.path, "templates")); err != nil {
		return err
	}
	if err := m.loadStaticValues(log); err != nil {
		return err
	}
	if m.enabledScript, err = findEnabledScript(filepath.Join(c.path, enabledFileName), log); err != nil {
		return err
	}
	if m.configSchemaPath, err = optionalFile(filepath.Join(c.path, configSchemaFile)); err != nil {
		return err
	}
	if m.valuesSchemaPath, err = optionalFile(filepath.Join(c.path, valuesSchemaFile)); err != nil {
		return err
	}
	if m.hooks, err = findHooks(filepath.Join(c.path, hooksDirName), log); err != nil {
		return err
	}
	return nil
}

// loadStaticValues reads the module's own values.yaml. A file that has keys
// but neither <key> nor <key>Enabled is most likely written for another
// layout, so it is warned about.
func (m *Module) loadStaticValues(log *slog.Logger) error {
	f, err := readValuesFile(filepath.Join(m.path, valuesFileName))
	if err != nil {
		return err
	}
	if m.staticValues, err = f.section(m.key); err != nil {
		return err
	}
	if m.staticEnabled, err = f.enabled(m.key); err != nil {
		return err
	}
	_, hasSection := f.top[m.key]
	if len(f.top) > 0 && !hasSection && m.staticEnabled == nil {
		log.Warn("module values file has no module section", slog.String(logkey.Path, f.path))
	}
	return nil
}

// findEnabledScript returns path when it is an executable regular file, ""
// when it is absent; anything else is warned about and ignored.
func findEnabledScript(path string, log *slog.Logger) (string, error) {
	info, err := statOptional(path)
	switch {
	case err != nil:
		return "", err
	case info == nil:
		return "", nil
	case !info.Mode().IsRegular():
		log.Warn("enabled script is not a regular file, ignored", slog.String(logkey.Path, path))
		return "", nil
	case info.Mode().Perm()&0o111 == 0:
		log.Warn("enabled script is not executable, ignored", slog.String(logkey.Path, path))
		return "", nil
	}
	return path, nil
}

// statOptional stats path following symlinks; a missing path (or a broken
// symlink, or a parent that is not a directory) yields nil and no error.
func statOptional(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, loopError(path, err) // *fs.PathError names the path
	}
	return info, nil
}

func isRegular(path string) (bool, error) {
	info, err := statOptional(path)
	return info != nil && info.Mode().IsRegular(), err
}

func isDir(path string) (bool, error) {
	info, err := statOptional(path)
	return info != nil && info.IsDir(), err
}

// optionalFile returns path when it is a regular file, else "".
func optionalFile(path string) (string, error) {
	ok, err := isRegular(path)
	if !ok {
		return "", err
	}
	return path, nil
}

// brokenModule is the descriptor of a module directory that could not be
// read: it has a name, an order and a path, nothing to run, and err says
// what is wrong.
func brokenModule(c candidate, err error) *Module {
	return &Module{name: c.name, key: KeyFor(c.name), order: c.order, path: c.path, err: err}
}

// readChartVersion returns Chart.yaml's version, "" when it has none or
// cannot be read (the chart's own checks report that when it renders).
func readChartVersion(path string) string {
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if err != nil {
		return ""
	}
	var chart struct {
		Version string `json:"version"`
	}
	if yaml.Unmarshal(data, &chart) != nil {
		return ""
	}
	return chart.Version
}
