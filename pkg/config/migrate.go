package config

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// ToModuleConfigs returns the ModuleConfig objects that configure what c
// does: "global" with the global section (when it has one), and one object
// per module with a section or an Enabled flag, by name. Reading them back
// (FromModuleConfigs) gives c again, up to empty sections, which equal
// absent ones.
func ToModuleConfigs(c *Config) []v1.ModuleConfig {
	var out []v1.ModuleConfig
	obj := func(name string) v1.ModuleConfig {
		return v1.ModuleConfig{TypeMeta: metav1.TypeMeta{APIVersion: v1.APIVersion, Kind: v1.KindModuleConfig},
			ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	if len(c.Global) > 0 {
		g := obj(v1.GlobalModuleConfigName)
		g.Spec.Settings = map[string]any(c.Global.DeepCopy())
		out = append(out, g)
	}
	keys := slices.Concat(slices.Collect(maps.Keys(c.Modules)), slices.Collect(maps.Keys(c.Enabled)), slices.Collect(maps.Keys(c.Maintenance)))
	slices.Sort(keys)
	for _, key := range slices.Compact(keys) {
		m := obj(module.NameFor(key))
		if s, ok := c.Modules[key]; ok && len(s) > 0 {
			m.Spec.Settings = map[string]any(s.DeepCopy())
		}
		if e, ok := c.Enabled[key]; ok {
			m.Spec.Enabled = &e
		}
		if c.Maintenance[key] {
			m.Spec.Maintenance = MaintenanceNoResourceReconciliation
		}
		if m.Spec.Settings == nil && m.Spec.Enabled == nil && m.Spec.Maintenance == "" {
			continue // an empty section says nothing
		}
		out = append(out, m)
	}
	return out
}

// FromModuleConfigs returns the configuration ModuleConfig objects give,
// without checking them: the content ModuleConfigSource sends when every
// object is accepted.
func FromModuleConfigs(objs []v1.ModuleConfig) *Config {
	c := &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}}
	for i := range objs {
		o := &objs[i]
		spec := mcSpec{enabled: o.Spec.Enabled}
		spec.maintenance, _ = parseMaintenance(o.Spec.Maintenance) // unchecked, as documented
		if o.Spec.Settings != nil {
			spec.settings = values.Values(o.Spec.Settings)
		}
		spec.addTo(c, o.Name)
	}
	return c
}
