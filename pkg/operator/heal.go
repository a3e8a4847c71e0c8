package operator

import (
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/helm/records"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// routeHeal reacts to a deleted release object: the module runs again, and
// its Helm step puts the object back.
func (o *Operator) routeHeal(ev heal.Event) {
	if !o.state.get(ev.Module).Enabled {
		return
	}
	if o.upkeep.InMaintenance(ev.Module) {
		o.log.Info("release object deleted; module in maintenance, not restored", slog.String(logkey.Module, ev.Module),
			slog.String(logkey.Kind, ev.Object.Kind), slog.String(logkey.Namespace, ev.Object.Namespace), slog.String(logkey.Name, ev.Object.Name))
		return
	}
	if records.IsRecord(ev.Module, ev.Object.Kind, ev.Object.Name) {
		o.log.Warn("release record deleted, the release history is lost; running module to install the release again",
			slog.String(logkey.Module, ev.Module), slog.String(logkey.Release, ev.Module), slog.String(logkey.Kind, ev.Object.Kind), slog.String(logkey.Name, ev.Object.Name))
		if o.moduleEvents != nil {
			o.moduleEvents.ReleaseRecordDeleted(ev.Module, ev.Object.String())
		}
		o.queueModuleRun(ev.Module)
		return
	}
	o.log.Info("release object deleted, running module to restore it", slog.String(logkey.Module, ev.Module),
		slog.String(logkey.Kind, ev.Object.Kind), slog.String(logkey.Namespace, ev.Object.Namespace), slog.String(logkey.Name, ev.Object.Name))
	if o.recorder != nil {
		o.recorder.ObjectsHealed(ev.Module, 1)
	}
	o.pool.Request(ev.Module, nil) // not an input change: a failing module keeps its backoff
}
