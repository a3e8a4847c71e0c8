// Package store owns the values modules and hooks see: what they are
// computed from (static values, schema defaults, the ConfigMap in force,
// hooks' accumulated patches), the layering that computes them on demand,
// and the atomic edits hooks make to the ConfigMap content.
package store

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/schema"
)

// Store holds what values are computed from: static values from disk, the
// last good ConfigMap, and hooks' accumulated patches. Effective values are
// derived on demand, never stored, so they cannot go stale. The main queue
// worker applies ConfigMap contents; hook runs, on the main queue or on
// module workers, add their patches. Every change is one step under the
// mutex (read, compute and write together), which also lets status
// readers in.
type Store struct {
	mu sync.RWMutex

	modules *module.Set
	// config is the last valid ConfigMap content; nil until one was read.
	config *config.Config
	// globalPatch applies to {"global": ..., "<key>Enabled": ...}.
	globalPatch values.Patch
	// modulePatch applies to {"<key>": ...}, by module name.
	modulePatch map[string]values.Patch

	// Schemas are loaded once; a nil *schema.Schemas has no defaults and
	// validates everything. schemaErrs holds modules whose schema files
	// could not be loaded.
	globalSchemas *schema.Schemas
	schemas       map[string]*schema.Schemas
	schemaErrs    map[string]error
}

// New loads every schema. A broken global schema is an error; a broken
// module schema is kept as that module's error.
func New(mods *module.Set) (*Store, error) {
	s := &Store{modules: mods, modulePatch: map[string]values.Patch{}, schemas: map[string]*schema.Schemas{}, schemaErrs: map[string]error{}}
	g := mods.Global()
	gs, err := schema.LoadSchemas(g.ConfigSchemaPath(), g.ValuesSchemaPath())
	if err != nil {
		return nil, fmt.Errorf("global schemas: %w", err)
	}
	s.globalSchemas = gs
	for _, m := range mods.Modules() {
		ms, err := schema.LoadSchemas(m.ConfigSchemaPath(), m.ValuesSchemaPath())
		if err != nil {
			s.schemaErrs[m.Name()] = fmt.Errorf("module %s: %w", m.Name(), err)
			continue
		}
		s.schemas[m.Name()] = ms
	}
	return s, nil
}

// GlobalDoc is the document global hooks patch: global values and the
// dynamic <key>Enabled flags they set.
func (s *Store) GlobalDoc() values.Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.globalDoc()
}

// GlobalLayers are the sources of global values below hook patches, lowest
// priority first.
func (s *Store) GlobalLayers() []Layer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.globalLayers()
}

// ModuleLayers are the sources of a module's values below hook patches,
// lowest priority first.
func (s *Store) ModuleLayers(m *module.Module) []Layer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.moduleLayers(m)
}

// globalDoc is the document global hooks patch: global values and the
// dynamic <key>Enabled flags they set.
func (s *Store) globalDoc() values.Values {
	base := values.Values{config.GlobalKey: mergeLayers(s.globalLayers())}
	return applyLenient(s.globalPatch, base)
}

// globalLayers are the sources of global values below hook patches, lowest
// priority first.
func (s *Store) globalLayers() []Layer {
	return withDefaults(s.globalSchemas, []Layer{
		{Source: "modules/values.yaml key global", Values: s.modules.GlobalStatic()},
	}, Layer{Source: "ConfigMap key global", Values: s.configGlobal()})
}

// moduleLayers are the sources of a module's values below hook patches,
// lowest priority first.
func (s *Store) moduleLayers(m *module.Module) []Layer {
	var cfg values.Values
	if s.config != nil {
		cfg = s.config.Modules[m.Key()]
	}
	return withDefaults(s.schemas[m.Name()], []Layer{
		{Source: "modules/values.yaml key " + m.Key(), Values: m.CommonValues()},
		{Source: filepath.Base(m.Path()) + "/values.yaml", Values: m.StaticValues()},
	}, Layer{Source: "ConfigMap key " + m.Key(), Values: cfg})
}

// withDefaults adds schema defaults to static layers and the config layer:
// config-values defaults fill what static values leave open, the config
// overrides both, and values defaults fill what is still open. Each
// defaults layer holds only the leaves it added, so merging the layers in
// order gives the effective values and every leaf is attributed to the
// layer that set it.
func withDefaults(sch *schema.Schemas, static []Layer, cfg Layer) []Layer {
	base := mergeLayers(static)
	withConfigDefaults := sch.ApplyDefaults(schema.ConfigSchema, base)
	merged := values.Merge(withConfigDefaults, cfg.Values)
	withValuesDefaults := sch.ApplyDefaults(schema.ValuesSchema, merged)
	return append(static,
		Layer{Source: "config-values schema default", Values: added(base, withConfigDefaults)},
		cfg,
		Layer{Source: "values schema default", Values: added(merged, withValuesDefaults)},
	)
}

// added returns the parts of after that before lacks: keys that are new,
// and whole values that differ (lists, scalars).
func added(before, after values.Values) values.Values {
	out := values.Values{}
	for k, v := range after {
		old, ok := before[k]
		am, aIsMap := asMap(v)
		bm, bIsMap := asMap(old)
		switch {
		case !ok:
			out[k] = v
		case aIsMap && bIsMap:
			if sub := added(bm, am); len(sub) > 0 {
				out[k] = map[string]any(sub)
			}
		case values.Checksum(v) != values.Checksum(old):
			out[k] = v
		}
	}
	return out
}

func mergeLayers(layers []Layer) values.Values {
	vs := make([]values.Values, 0, len(layers))
	for _, l := range layers {
		vs = append(vs, l.Values)
	}
	return values.Merge(vs...)
}

func (s *Store) configGlobal() values.Values {
	if s.config == nil {
		return nil
	}
	return s.config.Global
}

// GlobalValues returns the effective global values.
func (s *Store) GlobalValues() values.Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.globalDoc().Section(config.GlobalKey)
}

// DynamicEnabled returns the <key>Enabled flags set by global hooks.
func (s *Store) DynamicEnabled() map[string]bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	flags := map[string]bool{}
	for k, v := range s.globalDoc() {
		if b, ok := v.(bool); ok && strings.HasSuffix(k, "Enabled") {
			flags[strings.TrimSuffix(k, "Enabled")] = b
		}
	}
	return flags
}

// ModuleValues returns the effective values of one module (its own section).
func (s *Store) ModuleValues(m *module.Module) values.Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.moduleValues(m)
}

func (s *Store) moduleValues(m *module.Module) values.Values {
	base := values.Values{m.Key(): mergeLayers(s.moduleLayers(m))}
	return applyLenient(s.modulePatch[m.Name()], base).Section(m.Key())
}

// ConfigFor returns the config values a hook sees: global, plus the
// module's section for module hooks (m may be nil).
func (s *Store) ConfigFor(m *module.Module) values.Values {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.configForLocked(m)
}

func (s *Store) configForLocked(m *module.Module) values.Values {
	out := values.Values{config.GlobalKey: values.Values{}}
	if s.config == nil {
		return out
	}
	out[config.GlobalKey] = s.config.Global.DeepCopy()
	if m != nil {
		out[m.Key()] = s.config.Modules[m.Key()].DeepCopy()
	}
	return out
}

// AddGlobalPatch validates a global hook's patch against the current values
// and keeps it. On error nothing changes.
func (s *Store) AddGlobalPatch(p values.Patch) error {
	if len(p) == 0 {
		return nil
	}
	if err := p.CheckRoots(values.GlobalHookRoots()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := p.Apply(s.globalDoc())
	if err != nil {
		return err
	}
	if err := s.globalSchemas.ValidateValues(config.GlobalKey, next.Section(config.GlobalKey)); err != nil {
		return err
	}
	s.globalPatch = values.Compact(append(s.globalPatch, p...))
	return nil
}

// AddModulePatch validates a module hook's patch and keeps it.
func (s *Store) AddModulePatch(m *module.Module, p values.Patch) error {
	if len(p) == 0 {
		return nil
	}
	if err := p.CheckRoots(values.ModuleHookRoots(m.Key())); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := p.Apply(values.Values{m.Key(): s.moduleValues(m)})
	if err != nil {
		return err
	}
	if err := s.schemas[m.Name()].ValidateValues(m.Key(), next.Section(m.Key())); err != nil {
		return err
	}
	s.modulePatch[m.Name()] = values.Compact(append(s.modulePatch[m.Name()], p...))
	return nil
}

// ResetModule forgets a disabled module's patches, so enabling it again
// starts clean.
func (s *Store) ResetModule(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.modulePatch, name)
}

// SetConfig replaces the ConfigMap content.
func (s *Store) SetConfig(c *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.config = c
}

// Config returns the ConfigMap content in force (nil before the first).
func (s *Store) Config() *config.Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.config
}

// applyLenient re-applies accumulated patches to recomputed values. Each
// patch was valid when its hook returned it; an op that no longer applies
// (its base changed since) is skipped rather than losing every later op.
func applyLenient(p values.Patch, base values.Values) values.Values {
	if out, err := p.Apply(base); err == nil {
		return out
	}
	out := base
	for i := range p {
		if next, err := p[i : i+1].Apply(out); err == nil {
			out = next
		}
	}
	return out
}

// patchConfig applies a hook's config-values patch to the config values it
// saw and returns the ConfigMap edit that writes the result back.
func patchConfig(p values.Patch, current values.Values, policy values.RootPolicy) (config.Edit, error) {
	edit := config.Edit{Sections: map[string]values.Values{}, Enabled: map[string]*bool{}}
	if len(p) == 0 {
		return edit, nil
	}
	if err := p.CheckRoots(policy); err != nil {
		return edit, err
	}
	next, err := p.Apply(current)
	if err != nil {
		return edit, err
	}
	keys := map[string]bool{}
	for k := range next {
		keys[k] = true
	}
	for k := range current {
		keys[k] = true
	}
	for k := range keys {
		v, present := next[k]
		if present && values.Checksum(v) == values.Checksum(current[k]) {
			continue
		}
		if flag, isFlag := strings.CutSuffix(k, "Enabled"); isFlag && k != config.GlobalKey {
			b, ok := v.(bool)
			switch {
			case !present:
				edit.Enabled[flag] = nil
			case ok:
				edit.Enabled[flag] = &b
			default:
				return edit, fmt.Errorf("/%s must be true or false, got %v", k, v)
			}
			continue
		}
		section, ok := v.(map[string]any)
		switch {
		case !present:
			edit.Sections[k] = nil
		case ok:
			edit.Sections[k] = values.Values(section)
		default:
			return edit, fmt.Errorf("/%s must be an object, got %T", k, v)
		}
	}
	return edit, nil
}

// applyEditLocked puts a ConfigMap edit the operator writes into the
// config in force, so the watch event that echoes the write changes
// nothing. Called with mu held.
func (s *Store) applyEditLocked(e config.Edit) {
	next := &config.Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}, Maintenance: map[string]bool{}}
	if s.config != nil {
		next.Global = s.config.Global
		maps.Copy(next.Modules, s.config.Modules)
		maps.Copy(next.Enabled, s.config.Enabled)
		maps.Copy(next.Maintenance, s.config.Maintenance)
	}
	for k, v := range e.Sections {
		switch {
		case k == config.GlobalKey && v == nil:
			next.Global = values.Values{}
		case k == config.GlobalKey:
			next.Global = v
		case v == nil:
			delete(next.Modules, k)
		default:
			next.Modules[k] = v
		}
	}
	for k, v := range e.Enabled {
		if v == nil {
			delete(next.Enabled, k)
		} else {
			next.Enabled[k] = *v
		}
	}
	s.config = next
}

// ValidateConfig checks a ConfigMap content against every config-values
// schema: the user's sections with config defaults, as the schemas say
// users may set them. Modules whose section is checked are those that have
// one or are switched on by the ConfigMap.
//
// CEL transition rules (those naming oldSelf) compare each section with
// the same section of the configuration in force, the last one accepted;
// sections it does not have, and every section before one was accepted,
// skip them.
func (s *Store) ValidateConfig(c *config.Config) (moduleErrs map[string]error, globalErr error) {
	inForce := s.Config()
	var oldGlobal values.Values
	if inForce != nil && inForce.Global != nil {
		oldGlobal = s.globalSchemas.ApplyDefaults(schema.ConfigSchema, inForce.Global)
	}
	globalErr = s.globalSchemas.ValidateTransition(schema.ConfigSchema, config.GlobalKey,
		s.globalSchemas.ApplyDefaults(schema.ConfigSchema, c.Global), oldGlobal)
	moduleErrs = map[string]error{}
	for _, m := range s.modules.Modules() {
		section, has := c.Modules[m.Key()]
		if !has && !c.Enabled[m.Key()] {
			continue
		}
		sch := s.schemas[m.Name()]
		var old values.Values
		if prev, had := inForceSection(inForce, m.Key()); had {
			old = sch.ApplyDefaults(schema.ConfigSchema, values.Merge(prev))
		}
		if err := sch.ValidateTransition(schema.ConfigSchema, m.Key(), sch.ApplyDefaults(schema.ConfigSchema, values.Merge(section)), old); err != nil {
			moduleErrs[m.Name()] = err
		}
	}
	return moduleErrs, globalErr
}

// inForceSection returns a module's section of the configuration in
// force, and whether it has one.
func inForceSection(inForce *config.Config, key string) (values.Values, bool) {
	if inForce == nil {
		return nil, false
	}
	section, has := inForce.Modules[key]
	return section, has || inForce.Enabled[key]
}

// ValidateModule checks a module's effective values against its values
// schema, or for Helm against the values schema with x-required-for-helm.
func (s *Store) ValidateModule(m *module.Module, forHelm bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.schemaErrs[m.Name()]; err != nil {
		return err
	}
	sch := s.schemas[m.Name()]
	v := s.moduleValues(m)
	if forHelm {
		return sch.ValidateHelm(m.Key(), v)
	}
	return sch.ValidateValues(m.Key(), v)
}
