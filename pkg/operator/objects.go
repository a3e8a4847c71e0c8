package operator

import (
	"cmp"
	"context"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// moduleObjects shows modules' states as Module objects;
// *moduleobject.Writer is the real one. Update and Prune must not block:
// they are called on the converge's critical path.
type moduleObjects interface {
	Run(ctx context.Context) error
	Update(s moduleobject.State)
	Prune(modules []string)
	Hold(on bool)
}

// useModuleObjects makes every module state change reach objects.
func (o *Operator) useModuleObjects(objects moduleObjects) {
	o.objects, o.chartVersions = objects, o.readChartVersions()
	o.state.onChange = o.publishModule
}

// publishModule hands a module's state to the Module objects; states
// calls it after every change.
func (o *Operator) publishModule(name string) {
	m, ok := o.modules.Module(name)
	if !ok {
		return
	}
	st := o.state.get(name)
	o.objects.Update(moduleobject.State{
		Name: name, Enabled: st.Enabled, By: st.By, Phase: st.Phase,
		HasChart: m.IsHelm(), Namespace: cmp.Or(m.Namespace(), o.opts.Namespace), Revision: st.Revision,
		ChartVersion: o.chartVersions[name], ValuesChecksum: st.ValuesChecksum,
		LastRun: st.LastRun, LastRunDuration: st.LastRunDuration, LastError: st.LastError,
		Maintenance: st.Maintenance, Message: objectMessage(st),
		Labels: definitionLabels(m), Warnings: m.Warnings(),
	})
}

// objectMessage is what a module's object says besides its phase: what
// its run waits for, or the requirement that disables it.
func objectMessage(st moduleState) string {
	if !st.Enabled && (st.By == status.SourceRequirement || st.By == status.SourceExclusiveGroup) {
		return st.Reason
	}
	return st.Message
}

// runModuleObjects publishes every module once and runs the writer; it
// writes from the first converge's plan on (objectsPlanned).
func (o *Operator) runModuleObjects(ctx context.Context) error {
	for _, m := range o.modules.Modules() {
		o.publishModule(m.Name())
	}
	return o.objects.Run(ctx)
}

// objectsPlanned lets the Module objects be written once the enabled
// state is decided, and prunes the objects of modules that are gone; and
// it holds their writes until the converge is done (objectsConverged), so
// they do not compete with its module runs for the API server. Called by
// the main queue worker after each converge plan; pruning happens once.
func (o *Operator) objectsPlanned() {
	if o.objects == nil {
		return
	}
	o.objects.Hold(true)
	if o.objectsStarted {
		return
	}
	o.objectsStarted = true
	names := make([]string, 0, len(o.modules.Modules()))
	for _, m := range o.modules.Modules() {
		names = append(names, m.Name())
	}
	o.objects.Prune(names)
}

// objectsConverged releases the writes held during a converge. Called by
// the main queue worker when a converge is done.
func (o *Operator) objectsConverged() {
	if o.objects != nil {
		o.objects.Hold(false)
	}
}

// chartVersions reads the chart version of every module with a
// Chart.yaml, once: the module directories do not change while the
// operator runs.
func (o *Operator) readChartVersions() map[string]string {
	out := map[string]string{}
	for _, m := range o.modules.Modules() {
		if m.HasChartYAML() {
			out[m.Name()] = moduleobject.ChartVersion(m.Path())
		}
	}
	return out
}

// ValidateConfig checks a configuration against the config-values schemas
// of the global hooks and the modules, and the module sections by their
// batch binaries' settings checks, as a ConfigMap content is checked.
func (o *Operator) ValidateConfig(c *config.Config) (moduleErrs map[string]error, globalErr error) {
	return o.validateConfig(c)
}

// HasModule reports whether a module of that name was discovered.
func (o *Operator) HasModule(name string) bool {
	_, ok := o.modules.Module(name)
	return ok
}
