package config

import (
	"maps"
	"slices"
)

// Change says which parts of the ConfigMap differ between two Configs.
// Each kind of key is classified on its own, so a caller can react to every
// kind: an Enabled toggle shows up even when the module's section did not
// change.
type Change struct {
	// GlobalChanged is true when the global section's values differ.
	GlobalChanged bool
	// ModulesChanged lists, sorted, the module keys whose section values
	// differ. An absent section counts as empty values.
	ModulesChanged []string
	// EnabledChanged lists, sorted, the module keys whose Enabled key was
	// added, removed or flipped.
	EnabledChanged []string
	// MaintenanceChanged lists, sorted, the module keys that entered or
	// left maintenance.
	MaintenanceChanged []string
}

// Empty reports whether nothing changed.
func (c Change) Empty() bool {
	return !c.GlobalChanged && len(c.ModulesChanged) == 0 && len(c.EnabledChanged) == 0 && len(c.MaintenanceChanged) == 0
}

// Diff classifies what changed from prev to next. It is a pure function of
// the values in both Configs; a nil Config is the empty one, as for an
// absent ConfigMap. Sections are compared by Config.Checksum, so key order,
// formatting and number spelling in the YAML do not count as changes.
func Diff(prev, next *Config) Change {
	var ch Change
	ch.GlobalChanged = prev.Checksum(GlobalKey) != next.Checksum(GlobalKey)
	for _, key := range unionKeys(modulesOf(prev), modulesOf(next)) {
		if prev.Checksum(key) != next.Checksum(key) {
			ch.ModulesChanged = append(ch.ModulesChanged, key)
		}
	}
	oldEnabled, newEnabled := enabledOf(prev), enabledOf(next)
	for _, key := range unionKeys(oldEnabled, newEnabled) {
		was, wasSet := oldEnabled[key]
		is, isSet := newEnabled[key]
		if wasSet != isSet || was != is {
			ch.EnabledChanged = append(ch.EnabledChanged, key)
		}
	}
	oldMaint, newMaint := maintenanceOf(prev), maintenanceOf(next)
	for _, key := range unionKeys(oldMaint, newMaint) {
		if oldMaint[key] != newMaint[key] {
			ch.MaintenanceChanged = append(ch.MaintenanceChanged, key)
		}
	}
	return ch
}

func maintenanceOf(c *Config) map[string]bool {
	if c == nil {
		return nil
	}
	return c.Maintenance
}

func modulesOf(c *Config) map[string]bool {
	if c == nil {
		return nil
	}
	keys := make(map[string]bool, len(c.Modules))
	for k := range c.Modules {
		keys[k] = true
	}
	return keys
}

func enabledOf(c *Config) map[string]bool {
	if c == nil {
		return nil
	}
	return c.Enabled
}

// unionKeys returns the keys of a and b, sorted, without duplicates.
func unionKeys(a, b map[string]bool) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}
