package event

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonSettingsReset is the reason of the Event that a module's settings,
// or the global ones, were removed and fall back to their defaults.
const ReasonSettingsReset = "SettingsReset"

// SettingsReset records a Warning that module's settings (GlobalKey's for
// the global section) were removed: keys, never values, say what changes.
func (r *Recorder) SettingsReset(module string, keys []string) {
	what := "module " + module
	if module == "global" {
		what = "global"
	}
	r.moduleEvent(module, corev1.EventTypeWarning, ReasonSettingsReset, "Configure",
		fmt.Sprintf("%s: settings removed, reset to defaults: %s", what, truncate(strings.Join(keys, ", "), 800)))
}
