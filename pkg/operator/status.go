package operator

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// QueueStatuses returns every queue, main first.
func (o *Operator) QueueStatuses() []status.QueueStatus {
	snaps := o.queues.Snapshots()
	out := make([]status.QueueStatus, 0, len(snaps))
	for _, s := range snaps {
		qs := status.QueueStatus{Name: s.Name, Status: s.Status, Tasks: make([]status.TaskStatus, 0, len(s.Items))}
		for _, it := range s.Items {
			qs.Tasks = append(qs.Tasks, status.TaskStatus{Description: it.Task.String(), Queued: it.Queued, Failures: it.Failures, LastError: it.LastError})
		}
		out = append(out, qs)
	}
	return out
}

// GlobalValues returns the effective global values, hook patches included.
func (o *Operator) GlobalValues() values.Values { return o.store.GlobalValues() }

// GlobalConfig returns the global section of the ConfigMap in force.
func (o *Operator) GlobalConfig() values.Values {
	return o.store.ConfigFor(nil).Section(config.GlobalKey)
}

// ModuleValues returns a module's effective values, hook patches included,
// as its chart gets them: {global: ..., <moduleKey>: ...}.
func (o *Operator) ModuleValues(name string) (values.Values, error) {
	m, ok := o.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	return values.Values{config.GlobalKey: o.store.GlobalValues(), m.Key(): o.store.ModuleValues(m)}, nil
}

// ModuleConfig returns a module's section of the ConfigMap in force.
func (o *Operator) ModuleConfig(name string) (values.Values, error) {
	m, ok := o.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	return o.store.ConfigFor(m).Section(m.Key()), nil
}

// RenderModule renders a module's chart with its current values, as the
// next Helm run would.
func (o *Operator) RenderModule(ctx context.Context, name string) (*helm.Rendered, error) {
	m, ok := o.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	if !m.IsHelm() {
		return nil, fmt.Errorf("module %q has no chart", name)
	}
	v, err := o.ModuleValues(name)
	if err != nil {
		return nil, err
	}
	return o.releases.Render(ctx, helm.Release{Name: name, ChartDir: m.Path(), Values: map[string]any(v), Namespace: m.Namespace()})
}
