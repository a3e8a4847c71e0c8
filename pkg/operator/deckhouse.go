package operator

import (
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// markUnrunnable shows every module that cannot run (its module.yaml or
// directory cannot be read, or a requirement is not met) as failed, with
// the reason, from the start: its runs end at once without retries, and
// it is deleted only when it is disabled, as any module. The other
// modules are not held by it.
func (o *Operator) markUnrunnable() {
	for _, m := range o.modules.Modules() {
		err := m.Err()
		if err == nil {
			continue
		}
		o.state.update(m.Name(), func(s *moduleState) {
			s.HooksErr, s.Phase, s.LastError = err, status.PhaseFailed, err.Error()
		})
	}
}

// describeModule adds what a module's module.yaml says about it to its
// status.
func describeModule(st *status.ModuleStatus, m *module.Module) {
	def := m.Definition()
	st.Version, st.Description = m.Version(), m.Description()
	st.Critical, st.Stage, st.ExclusiveGroup = m.Critical(), def.Stage, m.ExclusiveGroup()
	st.Tags, st.Subsystems, st.Warnings = def.Tags, def.Subsystems, m.Warnings()
}
