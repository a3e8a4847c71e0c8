package lint

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/schema"
)

// store loads every schema into a values store. A global schema that does
// not load is reported and the tree is read again without the global
// hooks dir, so that modules are still checked; the returned set is the
// one the store holds. A nil store means nothing more can be checked.
func (l *linter) store(mods *module.Set) (*store.Store, *module.Set) {
	st, err := store.New(mods)
	if err == nil {
		return st, mods
	}
	l.add(Error, filepath.Join(mods.Global().Path(), "openapi"), "", RuleSchemaFile, err)
	opts := l.in.Discover
	opts.GlobalHooksDir, opts.Logger = "", nil
	bare, err := module.Discover(opts)
	if err != nil {
		return nil, nil
	}
	if st, err = store.New(bare); err != nil {
		return nil, nil
	}
	return st, bare
}

// overrideKeys reports the keys of the overrides that name no module.
func (l *linter) overrideKeys(mods *module.Set) {
	keys := moduleKeys(mods)
	for _, o := range l.in.Overrides {
		l.checkKeys(o.File, o.Values, keys)
	}
}

// applyOverrides layers the overrides over the ConfigMap as the plan
// commands do: global and <moduleKey>Enabled as a global hook's patch, a
// module's section as its hook's patch. A section its values schema
// refuses is reported by the file that holds it.
func (l *linter) applyOverrides(st *store.Store, mods *module.Set) {
	byKey := map[string]*module.Module{}
	for _, m := range mods.Modules() {
		byKey[m.Key()] = m
	}
	for _, o := range l.in.Overrides {
		for _, key := range slices.Sorted(maps.Keys(o.Values)) {
			v := o.Values[key]
			base, isEnabled := strings.CutSuffix(key, "Enabled")
			m := byKey[key]
			switch {
			case key == config.GlobalKey:
				section, ok := v.(map[string]any)
				if !ok {
					l.add(Error, o.File, key, RuleValuesFile, fmt.Errorf("want a map, got %s", values.KindOf(v)))
					continue
				}
				merged := values.Merge(st.GlobalValues(), values.Values(section))
				if err := st.AddGlobalPatch(values.Patch{{Op: "add", Path: "/" + key, Value: map[string]any(merged)}}); err != nil {
					l.overrideProblems(o, key, err)
				}
			case m == nil && isEnabled && byKey[base] != nil:
				b, ok := v.(bool)
				if !ok {
					l.add(Error, o.File, key, RuleValuesFile, fmt.Errorf("want true or false, got %s", values.KindOf(v)))
					continue
				}
				if err := st.AddGlobalPatch(values.Patch{{Op: "add", Path: "/" + key, Value: b}}); err != nil {
					l.add(Error, o.File, key, RuleValuesFile, err)
				}
			case m != nil:
				section, ok := v.(map[string]any)
				if !ok {
					l.add(Error, o.File, key, RuleValuesFile, fmt.Errorf("want a map, got %s", values.KindOf(v)))
					continue
				}
				merged := values.Merge(st.ModuleValues(m), values.Values(section))
				if err := st.AddModulePatch(m, values.Patch{{Op: "add", Path: "/" + key, Value: map[string]any(merged)}}); err != nil {
					l.overrideProblems(o, key, err)
				}
			}
			// Other keys name no module: reported by overrideKeys.
		}
	}
}

// overrideProblems reports the violations of an override's section that
// the override holds; the others are the static values', reported apart.
func (l *linter) overrideProblems(o Override, key string, err error) {
	var ve *schema.ValidationError
	if !errors.As(err, &ve) {
		l.add(Error, o.File, key, RuleValuesFile, err)
		return
	}
	section, _ := o.Values[key].(map[string]any)
	for _, v := range ve.Violations {
		if lookupPath(section, key, v.Path) {
			l.violation(Error, o.File, RuleValuesSchema, ve.File, v)
		}
	}
}

// layer is a source of a section's values and the file that holds it.
type layer struct {
	file   string
	values values.Values
}

// sourceOf names the file of the highest layer holding the violation's
// path, "" when none does (a missing key, a schema default).
func sourceOf(layers []layer, key, path string) string {
	for i := len(layers) - 1; i >= 0; i-- {
		if lookupPath(layers[i].values, key, path) {
			return layers[i].file
		}
	}
	return ""
}

var indexRE = regexp.MustCompile(`\[(\d+)\]`)

// lookupPath tells whether section holds a violation's path ("echo.hosts[0].name", rooted at
// the section key) in a section's values.
func lookupPath(section map[string]any, key, path string) bool {
	rest, ok := strings.CutPrefix(path, key)
	if !ok || section == nil {
		return false
	}
	rest = strings.TrimPrefix(indexRE.ReplaceAllString(rest, ".$1"), ".")
	var cur any = section
	if rest == "" {
		return true
	}
	for part := range strings.SplitSeq(rest, ".") {
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[part]; !ok {
				return false
			}
		case values.Values:
			if cur, ok = c[part]; !ok {
				return false
			}
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return false
			}
			cur = c[i]
		default:
			return false
		}
	}
	return true
}

// violation adds one schema violation found in file.
func (l *linter) violation(sev Severity, file, rule, schemaFile string, v schema.Violation) {
	l.problems = append(l.problems, Problem{
		Severity: sev, File: l.rel(file), Key: v.Path, Rule: rule,
		Message: fmt.Sprintf("%s (schema %s)", v.Message, l.rel(schemaFile)),
	})
}

// staticLayers are a module's values files, lowest first.
func staticLayers(m *module.Module) []layer {
	return []layer{
		{file: filepath.Join(filepath.Dir(m.Path()), "values.yaml"), values: m.CommonValues()},
		{file: filepath.Join(m.Path(), "values.yaml"), values: m.StaticValues()},
	}
}

// globalStatic checks the global section of modules/values.yaml against
// the global values schema, whatever the ConfigMap sets over it.
func (l *linter) globalStatic(mods *module.Set) {
	g := mods.Global()
	sch, err := schema.LoadSchemas(g.ConfigSchemaPath(), g.ValuesSchemaPath())
	if err != nil {
		return // reported as a schema file
	}
	var layers []layer
	for _, dir := range l.in.Discover.ModulesDirs {
		if abs, err := filepath.Abs(dir); err == nil {
			layers = append(layers, layer{file: filepath.Join(abs, "values.yaml"), values: mods.GlobalStatic()})
			break
		}
	}
	l.staticCheck(sch, config.GlobalKey, layers, nil)
}

// staticCheck validates the static layers with the schemas' defaults
// against the values schema, and reports each violation at a path the
// layers hold, by the file that holds it. It returns what it reported.
func (l *linter) staticCheck(sch *schema.Schemas, key string, layers []layer, reported map[string]bool) {
	var base values.Values
	for _, ly := range layers {
		base = values.Merge(base, ly.values)
	}
	v := sch.ApplyDefaults(schema.ValuesSchema, sch.ApplyDefaults(schema.ConfigSchema, base))
	var ve *schema.ValidationError
	if err := sch.ValidateValues(key, v); !errors.As(err, &ve) {
		return
	}
	for _, viol := range ve.Violations {
		file := sourceOf(layers, key, viol.Path)
		if file == "" {
			continue // not a static value: a key users must set, checked with the ConfigMap
		}
		l.violation(Error, file, RuleValuesSchema, ve.File, viol)
		if reported != nil {
			reported[viol.String()] = true
		}
	}
}

// module checks one module, enabled or not: its static values, its
// effective values, and its chart's render with them.
func (l *linter) module(ctx context.Context, st *store.Store, cfg *config.Config, m *module.Module) {
	sch, err := schema.LoadSchemas(m.ConfigSchemaPath(), m.ValuesSchemaPath())
	valid := true
	if err == nil {
		reported := map[string]bool{}
		static := staticLayers(m)
		l.staticCheck(sch, m.Key(), static, reported)
		layers := append(slices.Clone(static), layer{file: l.in.ConfigFile, values: cfg.Modules[m.Key()]})
		for _, o := range l.in.Overrides {
			section, _ := o.Values[m.Key()].(map[string]any)
			layers = append(layers, layer{file: o.File, values: section})
		}
		valid = l.effective(st, m, layers, reported)
	}
	if !m.IsHelm() || !valid {
		return
	}
	v := values.Values{config.GlobalKey: st.GlobalValues(), m.Key(): st.ModuleValues(m)}
	if _, err := helm.RenderOffline(ctx, l.in.Namespace, helm.Release{Name: m.Name(), ChartDir: m.Path(), Values: map[string]any(v)}); err != nil {
		l.add(Error, m.Path(), "", RuleRender, err)
	}
}

// effective validates a module's effective values as a module run does:
// against its values schema, then for a chart with x-required-for-helm.
// Each violation is reported once, by the file that holds the value (the
// schema for a missing key), with the rule it breaks. It reports whether
// the values are valid.
func (l *linter) effective(st *store.Store, m *module.Module, layers []layer, reported map[string]bool) bool {
	valid := true
	for _, forHelm := range []bool{false, true} {
		if forHelm && !m.IsHelm() {
			break
		}
		err := st.ValidateModule(m, forHelm)
		if err == nil {
			continue
		}
		valid = false
		var ve *schema.ValidationError
		if !errors.As(err, &ve) {
			l.add(Error, m.Path(), m.Key(), RuleValuesSchema, err)
			return false
		}
		rule := RuleValuesSchema
		if forHelm {
			rule = RuleHelmSchema
		}
		for _, v := range ve.Violations {
			if reported[v.String()] {
				continue
			}
			reported[v.String()] = true
			file := sourceOf(layers, m.Key(), v.Path)
			if file == "" {
				file = ve.File
			}
			l.violation(Error, file, rule, ve.File, v)
		}
	}
	return valid
}
