package operator

import (
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// applyMaintenance takes the maintenance modes of ConfigMap content c
// into use and returns the modules that left maintenance: their releases
// must be reconciled at once. A module in maintenance keeps running its
// hooks, but its release is not upgraded, its deleted objects are not
// restored and its drift is reported, never reverted.
func (o *Operator) applyMaintenance(c *config.Config) []string {
	var left []string
	for _, m := range o.modules.Modules() {
		on := c.Maintenance[m.Key()]
		var was bool
		o.state.update(m.Name(), func(s *moduleState) { was, s.Maintenance = s.Maintenance, on })
		if was == on {
			continue
		}
		o.releases.SetMaintenance(m.Name(), on)
		if o.recorder != nil {
			o.recorder.ModuleMaintenance(m.Name(), on)
		}
		if on {
			o.log.Info("module entered maintenance: its release is left as it is", slog.String(logkey.Module, m.Name()))
			continue
		}
		o.log.Info("module left maintenance", slog.String(logkey.Module, m.Name()))
		left = append(left, m.Name())
	}
	return left
}

// inMaintenance reports whether the module is in maintenance.
func (o *Operator) inMaintenance(name string) bool { return o.state.get(name).Maintenance }
