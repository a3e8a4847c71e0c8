package store

import (
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/schema"
)

// Sensitive returns the values of a module's section (m nil: the global
// section) that its schemas mark sensitive (schema.Schemas.Sensitive): of
// its effective values by the values schema, and of the configuration in
// force by the config schema, so that a value the configuration sets but
// that a rejected run never made effective counts too.
func (s *Store) Sensitive(m *module.Module) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var (
		sch       *schema.Schemas
		effective values.Values
		cfg       values.Values
	)
	if m == nil {
		sch, effective = s.globalSchemas, s.globalDoc().Section(config.GlobalKey)
		cfg = s.configGlobal()
	} else {
		sch, effective = s.schemas[m.Name()], s.moduleValues(m)
		if s.config != nil {
			cfg = s.config.Modules[m.Key()]
		}
	}
	out := sch.Sensitive(schema.ValuesSchema, effective)
	return append(out, sch.Sensitive(schema.ConfigSchema, cfg)...)
}
