package config

import (
	"maps"
	"slices"
)

// Reset is a section whose settings all went away: its module (or the
// global section) falls back to its defaults.
type Reset struct {
	// Key is the module key, or GlobalKey.
	Key string
	// Keys are, sorted, the top-level settings that were set and are no
	// longer: what changes, never the values.
	Keys []string
}

// Resets returns, in key order with global first, the sections that had
// settings in prev and have none in next (the section removed or
// emptied, the ModuleConfig deleted or its settings dropped). A nil
// Config is the empty one.
func Resets(prev, next *Config) []Reset {
	if prev == nil {
		return nil
	}
	var out []Reset
	if len(prev.Global) > 0 && (next == nil || len(next.Global) == 0) {
		out = append(out, Reset{Key: GlobalKey, Keys: slices.Sorted(maps.Keys(prev.Global))})
	}
	for _, key := range slices.Sorted(maps.Keys(prev.Modules)) {
		was := prev.Modules[key]
		if len(was) == 0 {
			continue
		}
		if next != nil && len(next.Modules[key]) > 0 {
			continue
		}
		out = append(out, Reset{Key: key, Keys: slices.Sorted(maps.Keys(was))})
	}
	return out
}
