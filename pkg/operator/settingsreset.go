package operator

import (
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// settingsEvents records resets of settings as Kubernetes Events;
// *event.Recorder is one. Module events that cannot are left out.
type settingsEvents interface {
	SettingsReset(module string, keys []string)
}

// reportResets says, in a WARN line and an Event each, which modules'
// settings (and whether the global ones) the change from prev to next
// removed: they fall back to their defaults, which may change what the
// module deploys. It names the settings' keys, never their values.
func (o *Operator) reportResets(prev, next *config.Config) {
	for _, r := range config.Resets(prev, next) {
		name := r.Key
		if r.Key != config.GlobalKey {
			if m, ok := o.moduleByKey(r.Key); ok {
				name = m
			}
		}
		o.log.Warn("module settings removed, reset to defaults", slog.String(logkey.Module, name), slog.Any(logkey.Fields, r.Keys))
		if ev, ok := o.moduleEvents.(settingsEvents); ok {
			ev.SettingsReset(name, r.Keys)
		}
	}
}
