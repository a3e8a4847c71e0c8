package operator

import (
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
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

// CheckExclusiveConfigMap refuses a ConfigMap content that would enable a
// second module of an exclusiveGroup (module.yaml): modules it does not
// switch keep the state they have.
func (o *Operator) CheckExclusiveConfigMap(data map[string]string) error {
	c, err := config.Parse(data)
	if err != nil {
		return nil //nolint:nilerr // CheckConfigMap reports it
	}
	enable := map[string]bool{}
	for key, on := range c.Enabled {
		if name, ok := o.moduleByKey(key); ok {
			enable[name] = on
		}
	}
	return o.checkExclusive(enable)
}

// CheckExclusiveModuleConfig refuses a ModuleConfig that enables a module
// while another module of its exclusiveGroup is enabled.
func (o *Operator) CheckExclusiveModuleConfig(object []byte) error {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(object); err != nil {
		return nil //nolint:nilerr // the ModuleConfig check reports it
	}
	on, found, err := unstructured.NestedBool(u.Object, "spec", "enabled")
	if err != nil || !found {
		return nil //nolint:nilerr // nothing switched; a wrong type is the ModuleConfig check's
	}
	if _, ok := o.modules.Module(u.GetName()); !ok {
		return nil
	}
	if err := o.checkExclusive(map[string]bool{u.GetName(): on}); err != nil {
		return fmt.Errorf("spec.enabled: %w", err)
	}
	return nil
}

// checkExclusive checks a change of enabled states, module name to the
// state a write asks for, against the enabled modules now.
func (o *Operator) checkExclusive(enable map[string]bool) error {
	after := o.state.enabledSet()
	switchedOn := map[string]bool{}
	for name, on := range enable {
		if on && !after[name] {
			switchedOn[name] = true
		}
		after[name] = on
	}
	errs := o.modules.ExclusiveConflicts(after, switchedOn)
	for _, err := range errs {
		o.log.Warn("configuration refused", slog.String(logkey.Reason, err.Error()))
	}
	return errors.Join(errs...)
}
