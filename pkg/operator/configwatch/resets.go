package configwatch

import (
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ReportResets says, in a WARN line and an Event each, which modules'
// settings (and whether the global ones) the change from prev to next
// removed: they fall back to their defaults, which may change what the
// module deploys. It names the settings' keys, never their values. The
// main queue worker calls it when it applies next.
func (w *Watch) ReportResets(prev, next *config.Config) {
	for _, r := range config.Resets(prev, next) {
		name := r.Key
		if r.Key != config.GlobalKey {
			if m, ok := w.moduleByKey(r.Key); ok {
				name = m
			}
		}
		w.log.Warn("module settings removed, reset to defaults", slog.String(logkey.Module, name), slog.Any(logkey.Fields, r.Keys))
		if w.opts.SettingsEvents != nil {
			w.opts.SettingsEvents.SettingsReset(name, r.Keys)
		}
	}
}

// moduleByKey names the module whose configuration key is key.
func (w *Watch) moduleByKey(key string) (string, bool) {
	for _, m := range w.opts.Modules.Modules() {
		if m.Key() == key {
			return m.Name(), true
		}
	}
	return "", false
}
