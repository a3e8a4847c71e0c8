// Package inspect answers what the debug API and the status page read of
// the operator: its queues with their tasks, the values and configuration
// in force, and a module's chart rendered as its next deploy would render
// it. It reads; it changes nothing.
package inspect

import (
	"context"
	"fmt"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/queue"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Renderer renders a release's chart; *release.Manager is the real one.
type Renderer interface {
	Render(ctx context.Context, r helm.Release) (*helm.Rendered, error)
}

// View reads the operator's queues, values store and modules. Its methods
// are safe for concurrent use, as those it reads are.
type View struct {
	queues   func() []status.QueueStatus
	store    *store.Store
	modules  *module.Set
	renderer Renderer
}

// New returns the View of the queues whose snapshots snapshots takes, of
// the values store st and of the modules mods, rendering charts with r.
func New[T fmt.Stringer](snapshots func() []queue.Snapshot[T], st *store.Store, mods *module.Set, r Renderer) *View {
	return &View{queues: func() []status.QueueStatus { return queueStatuses(snapshots()) }, store: st, modules: mods, renderer: r}
}

// queueStatuses is snaps as status shows them, each task by its String.
func queueStatuses[T fmt.Stringer](snaps []queue.Snapshot[T]) []status.QueueStatus {
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

// QueueStatuses returns every queue, main first.
func (v *View) QueueStatuses() []status.QueueStatus { return v.queues() }

// GlobalValues returns the effective global values, hook patches included.
func (v *View) GlobalValues() values.Values { return v.store.GlobalValues() }

// GlobalConfig returns the global section of the ConfigMap in force.
func (v *View) GlobalConfig() values.Values {
	return v.store.ConfigFor(nil).Section(config.GlobalKey)
}

// ModuleValues returns a module's effective values, hook patches included,
// as its chart gets them: {global: ..., <moduleKey>: ...}.
func (v *View) ModuleValues(name string) (values.Values, error) {
	m, ok := v.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	return values.Values{config.GlobalKey: v.store.GlobalValues(), m.Key(): v.store.ModuleValues(m)}, nil
}

// ModuleConfig returns a module's section of the ConfigMap in force.
func (v *View) ModuleConfig(name string) (values.Values, error) {
	m, ok := v.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	return v.store.ConfigFor(m).Section(m.Key()), nil
}

// RenderModule renders a module's chart with its current values, as the
// next Helm run would.
func (v *View) RenderModule(ctx context.Context, name string) (*helm.Rendered, error) {
	m, ok := v.modules.Module(name)
	if !ok {
		return nil, fmt.Errorf("no module %q", name)
	}
	if !m.IsHelm() {
		return nil, fmt.Errorf("module %q has no chart", name)
	}
	vals, err := v.ModuleValues(name)
	if err != nil {
		return nil, err
	}
	return v.renderer.Render(ctx, helm.Release{Name: name, ChartDir: m.Path(), Values: map[string]any(vals), Namespace: m.Namespace()})
}
