// Package module discovers modules and global hooks on disk and describes them with immutable descriptors.
package module

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// Module describes one module directory as found by Discover. It is
// immutable: every getter returns a value or a copy the caller may modify.
type Module struct {
	name  string
	key   string
	order int
	path  string

	hasChartYAML bool
	hasTemplates bool
	// chartVersion is Chart.yaml's version, "" without one.
	chartVersion string

	staticValues  values.Values
	staticEnabled *bool
	commonValues  values.Values
	commonEnabled *bool

	hooks            []string
	enabledScript    string
	configSchemaPath string
	valuesSchemaPath string

	// def is module.yaml; nil when the module has none.
	def *Definition
	// remediation is the module's own setting for failed releases, from
	// its module.yaml.
	remediation Remediation

	// warnings are what was ignored in module.yaml; err, when set, is why
	// the module cannot run (see Err).
	warnings []string
	err      error
}

// Err says why the module cannot run, nil when it can: its directory or
// module.yaml could not be read (the error names the file and the key),
// or a requirement of its module.yaml is not met. Such a module stays in
// the Set, so that its state is shown and its release is neither run nor
// deleted for it; the other modules are not affected.
func (m *Module) Err() error { return m.err }

// Warnings returns what was ignored in the module's module.yaml: fields
// the operator does not know, and Deckhouse's fields that mean nothing
// here. Each was logged once by Discover.
func (m *Module) Warnings() []string { return slices.Clone(m.warnings) }

// Critical reports whether module.yaml marks the module critical: the
// other modules start once every critical module finished its first
// attempt.
func (m *Module) Critical() bool { return m.def != nil && m.def.Critical }

// Version is module.yaml's version, else Chart.yaml's, "" when neither
// has one. Other modules' requirements are checked against it.
func (m *Module) Version() string {
	if m.def != nil && m.def.Version != "" {
		return m.def.Version
	}
	return m.chartVersion
}

// ExclusiveGroup is module.yaml's exclusiveGroup, "" for none.
func (m *Module) ExclusiveGroup() string {
	if m.def == nil {
		return ""
	}
	return m.def.ExclusiveGroup
}

// Description is module.yaml's description, else its English
// description (descriptions.en), else the first of its descriptions by
// language.
func (m *Module) Description() string {
	if m.def == nil {
		return ""
	}
	if m.def.Description != "" {
		return m.def.Description
	}
	if d := m.def.Descriptions["en"]; d != "" {
		return d
	}
	for _, lang := range slices.Sorted(maps.Keys(m.def.Descriptions)) {
		if d := m.def.Descriptions[lang]; d != "" {
			return d
		}
	}
	return ""
}

// Name is the module name: the directory name without its NNN- prefix, in
// kebab-case. It is also the Helm release name.
func (m *Module) Name() string { return m.name }

// Key is the camelCase values key of the module, KeyFor(Name()).
func (m *Module) Key() string { return m.key }

// Order is the numeric NNN- prefix of the directory, or module.yaml's
// weight, or the unnumbered order given to Discover when there is neither.
func (m *Module) Order() int { return m.order }

// Path is the absolute path of the module directory as listed in its modules
// dir; a symlinked directory keeps the path of the link.
func (m *Module) Path() string { return m.path }

// IsHelm reports whether the module is a Helm chart: it has Chart.yaml or a
// templates/ directory. A module that is not a chart has hooks only.
func (m *Module) IsHelm() bool { return m.hasChartYAML || m.hasTemplates }

// HasChartYAML reports whether the module has its own Chart.yaml. A chart
// without one needs a generated Chart.yaml named after the module.
func (m *Module) HasChartYAML() bool { return m.hasChartYAML }

// StaticValues returns a copy of the <Key()> section of the module's own
// values.yaml, or nil when the file or the section is absent.
func (m *Module) StaticValues() values.Values { return copyValues(m.staticValues) }

// StaticEnabled returns <Key()>Enabled from the module's own values.yaml, or
// nil when absent. The reference implementation ignores this flag; whether
// it counts is the caller's decision.
func (m *Module) StaticEnabled() *bool { return copyBool(m.staticEnabled) }

// CommonValues returns a copy of the <Key()> section of the modules dirs'
// values.yaml files, merged across dirs (a later dir overrides an earlier
// one), or nil when no file has the section. Callers layer it below
// StaticValues.
func (m *Module) CommonValues() values.Values { return copyValues(m.commonValues) }

// CommonEnabled returns <Key()>Enabled from the modules dirs' values.yaml
// files (the last dir that sets it wins), or nil when no file sets it.
func (m *Module) CommonEnabled() *bool { return copyBool(m.commonEnabled) }

// Hooks returns the sorted absolute paths of the executables under the
// module's hooks/ directory (recursive; lib/, venv/ and hidden entries are
// skipped). Paths go through symlinks without resolving them.
func (m *Module) Hooks() []string { return slices.Clone(m.hooks) }

// EnabledScript returns the absolute path of the executable enabled file, or
// "" when there is none (a non-executable file is warned about and ignored).
func (m *Module) EnabledScript() string { return m.enabledScript }

// ConfigSchemaPath returns the absolute path of openapi/config-values.yaml,
// or "" when absent.
func (m *Module) ConfigSchemaPath() string { return m.configSchemaPath }

// ValuesSchemaPath returns the absolute path of openapi/values.yaml, or ""
// when absent.
func (m *Module) ValuesSchemaPath() string { return m.valuesSchemaPath }

// HasDefinition reports whether the module has a module.yaml. Such a
// module waits only for the modules it requires; one without waits, as
// always, for every module of a lower order.
func (m *Module) HasDefinition() bool { return m.def != nil }

// Definition returns a copy of the module's module.yaml, the zero
// Definition when it has none.
func (m *Module) Definition() Definition {
	if m.def == nil {
		return Definition{}
	}
	d := *m.def
	d.Requires = maps.Clone(d.Requires)
	d.Tags, d.Subsystems, d.RBAC = slices.Clone(d.Tags), slices.Clone(d.Subsystems), slices.Clone(d.RBAC)
	d.Descriptions = maps.Clone(d.Descriptions)
	if d.Requirements != nil {
		r := *d.Requirements
		r.Modules, r.Bootstrapped = maps.Clone(r.Modules), slices.Clone(r.Bootstrapped)
		d.Requirements = &r
	}
	if d.Weight != nil {
		w := *d.Weight
		d.Weight = &w
	}
	if d.Disable != nil {
		dis := *d.Disable
		dis.Messages = maps.Clone(dis.Messages)
		d.Disable = &dis
	}
	return d
}

// DisableConfirmation says whether disabling the module needs the
// allow-disabling annotation (module.yaml disable.confirmation), and the
// module's message for the refusal.
func (m *Module) DisableConfirmation() (needed bool, message string) {
	if m.def == nil || m.def.Disable == nil {
		return false, ""
	}
	return m.def.Disable.Confirmation, m.def.Disable.Message
}

// Namespace is the namespace of the module's release from module.yaml, ""
// for the operator's own.
func (m *Module) Namespace() string {
	if m.def == nil {
		return ""
	}
	return m.def.Namespace
}

// Requires returns the names of the modules this one requires, sorted.
func (m *Module) Requires() []string {
	if m.def == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(m.def.Requires))
}

// Global describes the global hooks directory. The zero Global (no
// directory configured or the directory does not exist) has no hooks and no
// schemas.
type Global struct {
	path             string
	hooksDir         string
	hooks            []string
	configSchemaPath string
	valuesSchemaPath string
}

// Path is the absolute global hooks directory, or "" when there is none.
func (g *Global) Path() string { return g.path }

// HooksDir is the directory searched for hooks: Path()/hooks when it exists,
// else Path() itself; "" when there is none.
func (g *Global) HooksDir() string { return g.hooksDir }

// Hooks returns the sorted absolute paths of the global hook executables,
// found under HooksDir() by the same rules as module hooks.
func (g *Global) Hooks() []string { return slices.Clone(g.hooks) }

// ConfigSchemaPath returns the absolute path of Path()/openapi/config-values.yaml,
// or "" when absent.
func (g *Global) ConfigSchemaPath() string { return g.configSchemaPath }

// ValuesSchemaPath returns the absolute path of Path()/openapi/values.yaml,
// or "" when absent.
func (g *Global) ValuesSchemaPath() string { return g.valuesSchemaPath }

// Set is the result of Discover: the modules, the global hooks and the
// common static values. It is immutable and safe for concurrent use.
type Set struct {
	modules      []*Module
	byName       map[string]*Module
	global       *Global
	globalStatic values.Values
}

// Modules returns the modules sorted by Order, then Name. The returned slice
// is a copy; the modules themselves are immutable.
func (s *Set) Modules() []*Module { return slices.Clone(s.modules) }

// Module returns the module with the given name.
func (s *Set) Module(name string) (*Module, bool) {
	m, ok := s.byName[name]
	return m, ok
}

// Global returns the global hooks descriptor; it is never nil.
func (s *Set) Global() *Global { return s.global }

// GlobalStatic returns a copy of the global sections of the modules dirs'
// values.yaml files, merged across dirs (a later dir overrides an earlier
// one), or nil when no file has one.
func (s *Set) GlobalStatic() values.Values { return copyValues(s.globalStatic) }

// Err joins the errors of the modules that cannot run (see Module.Err),
// each named by its module, in module order; nil when every module can.
func (s *Set) Err() error {
	var errs []error
	for _, m := range s.modules {
		if m.err != nil {
			errs = append(errs, fmt.Errorf("module %q: %w", m.name, m.err))
		}
	}
	return errors.Join(errs...)
}
