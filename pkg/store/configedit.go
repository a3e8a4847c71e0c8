package store

import (
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// ApplyConfigPatch applies a hook's config-values patch (m is nil for
// global hooks) to the config in force, in one step under the lock, so that
// no ConfigMap change applied meanwhile is computed over. It returns the
// edit to write to the ConfigMap (empty when the patch changes nothing) and
// the edit that undoes it in memory, for revertEdit when the write fails.
func (s *Store) ApplyConfigPatch(m *module.Module, p values.Patch, policy values.RootPolicy) (edit, undo config.Edit, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	edit, err = patchConfig(p, s.configForLocked(m), policy)
	if err != nil || len(edit.Sections)+len(edit.Enabled) == 0 {
		return edit, config.Edit{}, err
	}
	undo = s.undoOfLocked(edit)
	s.applyEditLocked(edit)
	return edit, undo, nil
}

// undoOfLocked returns the edit that puts back the current value of every
// key e names. Called with mu held.
func (s *Store) undoOfLocked(e config.Edit) config.Edit {
	undo := config.Edit{Sections: map[string]values.Values{}, Enabled: map[string]*bool{}}
	for k := range e.Sections {
		undo.Sections[k] = s.sectionLocked(k)
	}
	for k := range e.Enabled {
		undo.Enabled[k] = s.enabledLocked(k)
	}
	return undo
}

// RevertEdit undoes, in memory, an edit whose write failed: each key that
// still holds the value written gets its value from undo. A key changed
// since (a ConfigMap change applied while the write was in flight) keeps
// the newer value: the user's change wins over a hook's failed one.
func (s *Store) RevertEdit(written, undo config.Edit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	back := config.Edit{Sections: map[string]values.Values{}, Enabled: map[string]*bool{}}
	for k, v := range written.Sections {
		if sameSection(s.sectionLocked(k), v) {
			back.Sections[k] = undo.Sections[k]
		}
	}
	for k, v := range written.Enabled {
		if sameFlag(s.enabledLocked(k), v) {
			back.Enabled[k] = undo.Enabled[k]
		}
	}
	s.applyEditLocked(back)
}

// sectionLocked returns the section under key (config.GlobalKey or a module key)
// of the config in force, nil when absent.
func (s *Store) sectionLocked(key string) values.Values {
	switch {
	case s.config == nil:
		return nil
	case key == config.GlobalKey:
		return s.config.Global
	default:
		return s.config.Modules[key]
	}
}

// enabledLocked returns a module key's Enabled flag in the config in
// force, nil when absent.
func (s *Store) enabledLocked(key string) *bool {
	if s.config == nil {
		return nil
	}
	if v, ok := s.config.Enabled[key]; ok {
		return &v
	}
	return nil
}

func sameSection(a, b values.Values) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return values.Checksum(a) == values.Checksum(b)
}

func sameFlag(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
