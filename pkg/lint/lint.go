// Package lint checks modules, global hooks and a ConfigMap offline with
// the operator's own validation code, and reports every problem it finds,
// each naming its file, key and rule, instead of stopping at the first.
package lint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/plan"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/schema"
)

// Severity says whether a problem stops the operator from doing what the
// tree asks (Error) or is likely a mistake it works around (Warning).
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Rules name what a problem breaks.
const (
	RuleDiscovery        = "discovery"          // a module dir or file the operator refuses or ignores
	RuleModuleDefinition = "module-definition"  // a module the operator does not run: module.yaml, requirements
	RuleDuplicateModule  = "duplicate-module"   // two module dirs with one name
	RuleNotExecutable    = "not-executable"     // a hook or enabled script without the x bit
	RuleValuesFile       = "values-file"        // a values.yaml that does not parse
	RuleUnknownKey       = "unknown-module-key" // a key naming no module
	RuleConfigMapKey     = "configmap-key"      // a ConfigMap key the operator rejects
	RuleSchemaFile       = "schema-file"        // an OpenAPI schema that does not load
	RuleConfigSchema     = "config-values-schema"
	RuleValuesSchema     = "values-schema"
	RuleHelmSchema       = "x-required-for-helm"
	RuleHookConfig       = "hook-config"    // a hook's --config output
	RuleEnabledScript    = "enabled-script" // an enabled script that fails
	RuleRender           = "render"         // a chart that does not render
)

// Problem is one thing wrong with the tree.
type Problem struct {
	Severity Severity `json:"severity"`
	// File is the file or directory at fault, relative to Input.Base when
	// under it.
	File string `json:"file,omitempty"`
	// Key is the ConfigMap key or dotted values path at fault.
	Key     string `json:"key,omitempty"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// String formats the problem as one line: "error: FILE: KEY: message
// [rule]", without the parts that are empty.
func (p Problem) String() string {
	parts := []string{string(p.Severity)}
	for _, s := range []string{p.File, p.Key} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ") + ": " + p.Message + " [" + p.Rule + "]"
}

// Runner runs hooks with --config and enabled scripts; *hook.Executor is
// the real one.
type Runner interface {
	Config(ctx context.Context, path string) ([]byte, error)
	Run(ctx context.Context, r hook.Run) (*hook.Result, error)
}

// Input is what to check.
type Input struct {
	// Discover says where the modules and global hooks are; its Logger is
	// replaced: what discovery warns about becomes problems.
	Discover module.Options
	// Namespace is the namespace charts render into.
	Namespace string
	// ConfigFile names the ConfigMap in problems; ConfigData is its data,
	// nil when there is none.
	ConfigFile string
	ConfigData map[string]string
	Runner     Runner
	// Overrides are layered over the ConfigMap, in order, as the plan
	// commands' --values and --set are.
	Overrides []Override
	// Base shortens paths in problems: files under it are shown relative.
	Base string
}

// Override is one layer of values given besides the tree and the
// ConfigMap (a --values file, --set arguments): global, <moduleKey> and
// <moduleKey>Enabled keys, applied as hook patches would be.
type Override struct {
	// File names the layer in problems: a file name, or "--set".
	File   string
	Values values.Values
}

// Run checks everything the operator checks when it loads the tree: module
// discovery, values files, the ConfigMap's keys and its sections against
// the config-values schemas, schema files, every hook's --config, enabled
// scripts, and then every module, enabled or not: its static values
// (values.yaml) and its effective values (with the ConfigMap and the
// overrides) against its values schema (with x-required-for-helm for
// charts), and its chart's render. One broken file does not stop the
// checks of the others. Problems come in that order.
func Run(ctx context.Context, in Input) []Problem {
	l := &linter{in: in}
	mods := l.discover()
	if mods == nil {
		return l.problems
	}
	l.valuesFiles(mods)
	cfg := l.configMap(mods)
	l.overrideKeys(mods)
	st, smods := l.store(mods)
	if st == nil {
		l.hooks(ctx, mods)
		return l.problems
	}
	if cfg != nil {
		l.configSections(st, cfg)
	} else {
		cfg, _ = config.Parse(nil) // absent or unparsable: the operator's empty ConfigMap
	}
	st.SetConfig(cfg)
	l.schemaFiles(st, smods)
	l.hooks(ctx, mods)
	l.applyOverrides(st, smods)
	if _, err := plan.Enabled(ctx, smods, st, in.Runner); err != nil {
		l.add(Error, "", "", RuleEnabledScript, err)
	}
	l.globalStatic(smods)
	for _, m := range smods.Modules() {
		// A module whose ConfigMap section is invalid is reported once,
		// not again as values, and not rendered, as the operator skips it.
		if !l.badSection[m.Name()] {
			l.module(ctx, st, cfg, m)
		}
	}
	return l.problems
}

// HasErrors reports whether problems hold an error, or with strict any
// problem at all.
func HasErrors(problems []Problem, strict bool) bool {
	return slices.ContainsFunc(problems, func(p Problem) bool { return strict || p.Severity == Error })
}

type linter struct {
	in       Input
	problems []Problem
	// badSection holds the modules whose ConfigMap section failed its
	// schema: reported once, not again as values.
	badSection map[string]bool
}

func (l *linter) add(sev Severity, file, key, rule string, err error) {
	l.problems = append(l.problems, Problem{Severity: sev, File: l.rel(file), Key: key, Rule: rule, Message: l.clean(err.Error())})
}

// rel shortens path to be relative to Base when it is under it.
func (l *linter) rel(path string) string {
	if path == "" || l.in.Base == "" || !filepath.IsAbs(path) {
		return path
	}
	if r, err := filepath.Rel(l.in.Base, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// clean shortens the absolute paths in a message the way rel does.
func (l *linter) clean(msg string) string {
	if l.in.Base == "" {
		return msg
	}
	return strings.ReplaceAll(msg, strings.TrimSuffix(l.in.Base, string(filepath.Separator))+string(filepath.Separator), "")
}

// configSections validates the ConfigMap's sections as the operator does
// when it reads the ConfigMap.
func (l *linter) configSections(st *store.Store, cfg *config.Config) {
	moduleErrs, globalErr := st.ValidateConfig(cfg)
	if globalErr != nil {
		l.schemaProblems(Error, l.in.ConfigFile, config.GlobalKey, globalErr)
	}
	l.badSection = map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(moduleErrs)) {
		l.badSection[name] = true
		l.schemaProblems(Error, l.in.ConfigFile, name, moduleErrs[name])
	}
}

// schemaFiles reports every module schema that does not load.
func (l *linter) schemaFiles(st *store.Store, mods *module.Set) {
	for _, m := range mods.Modules() {
		err := st.ValidateModule(m, false)
		var ve *schema.ValidationError
		if err != nil && !errors.As(err, &ve) {
			l.add(Error, filepath.Join(m.Path(), "openapi"), "", RuleSchemaFile, err)
		}
	}
}

// schemaProblems turns a schema validation error into one problem per
// violation. file is where the values came from; "" names the schema.
func (l *linter) schemaProblems(sev Severity, file, what string, err error) {
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		l.add(sev, file, what, RuleSchemaFile, err)
		return
	}
	rule := map[schema.Kind]string{schema.ConfigSchema: RuleConfigSchema, schema.ValuesSchema: RuleValuesSchema, schema.HelmSchema: RuleHelmSchema}[ve.Kind]
	if file == "" {
		file = ve.File
	}
	for _, v := range ve.Violations {
		l.problems = append(l.problems, Problem{
			Severity: sev, File: l.rel(file), Key: v.Path, Rule: rule,
			Message: fmt.Sprintf("%s (schema %s)", v.Message, l.rel(ve.File)),
		})
	}
}

// hooks runs every hook with --config, one at a time, as the operator
// loads them, so that every broken hook is reported, each of its problems
// apart.
func (l *linter) hooks(ctx context.Context, mods *module.Set) {
	g := mods.Global()
	for _, p := range g.Hooks() {
		if _, err := binding.Load(ctx, l.in.Runner, g.HooksDir(), []string{p}, hook.Global); err != nil {
			l.hookProblems(p, err)
		}
	}
	for _, m := range mods.Modules() {
		for _, p := range m.Hooks() {
			if _, err := binding.Load(ctx, l.in.Runner, m.Path(), []string{p}, hook.Module); err != nil {
				l.hookProblems(p, err)
			}
		}
	}
}

// hookProblems adds one problem per problem of a hook's configuration,
// keyed by the field at fault.
func (l *linter) hookProblems(path string, err error) {
	for _, e := range leafErrors(err) {
		var ce *hook.ConfigError
		if errors.As(e, &ce) {
			l.add(Error, path, ce.Field, RuleHookConfig, ce.Err)
			continue
		}
		l.add(Error, path, "", RuleHookConfig, e)
	}
}

// leafErrors flattens errors.Join trees.
func leafErrors(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, leafErrors(e)...)
	}
	return out
}
