package operator

import (
	"time"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/schedule"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// objectState is what module state (st, and whether the module is in
// maintenance) says of a module's Module object at now; the publisher adds
// what the module's directory says.
func objectState(st moduleState, maintenance bool, now time.Time) moduleobject.State {
	s := moduleobject.State{
		Enabled: st.Enabled, By: st.By, Phase: st.Phase, Revision: st.Revision, ValuesChecksum: st.ValuesChecksum,
		LastRun: st.LastRun, LastRunDuration: st.LastRunDuration, LastError: st.LastError,
		Maintenance: maintenance, Message: objectMessage(st),
	}
	if st.Enabled {
		s.NextRun = schedule.NextRun(crontabs(st.Hooks), now)
	}
	return s
}

// crontabs lists the crontabs of the hooks' schedule bindings.
func crontabs(hooks []*binding.Hook) []string {
	var out []string
	for _, h := range hooks {
		if h.Config == nil {
			continue
		}
		for _, s := range h.Config.Schedules {
			out = append(out, s.Crontab)
		}
	}
	return out
}

// objectMessage is what a module's object says besides its phase: what
// its run waits for, or the requirement that disables it.
func objectMessage(st moduleState) string {
	if !st.Enabled && (st.By == status.SourceRequirement || st.By == status.SourceExclusiveGroup) {
		return st.Reason
	}
	return st.Message
}

// ValidateConfig checks a configuration against the config-values schemas
// of the global hooks and the modules, and the module sections by their
// batch binaries' settings checks, as a ConfigMap content is checked.
func (o *Operator) ValidateConfig(c *config.Config) (moduleErrs map[string]error, globalErr error) {
	return o.checks.Validate(c, admission.Own)
}

// HasModule reports whether a module of that name was discovered.
func (o *Operator) HasModule(name string) bool { return o.checks.HasModule(name) }
