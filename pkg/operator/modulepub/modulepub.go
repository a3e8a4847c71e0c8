// Package modulepub is the owner of Module-object publishing: it hands
// each module's state, with what its directory says about it, to the
// Module objects' writer, prunes the objects of modules that are gone once
// the first plan is made, and holds the writes during a converge.
package modulepub

import (
	"cmp"
	"context"
	"sync"

	"github.com/addon-operator/addon-operator/pkg/kube/moduleobject"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// Writer shows modules' states as Module objects; *moduleobject.Writer is
// the real one. Update, Prune and Hold must not block: they are called on
// the converge's critical path.
type Writer interface {
	Run(ctx context.Context) error
	Update(s moduleobject.State)
	Prune(modules []string)
	Hold(on bool)
}

// StateFunc returns what module state says of the module name: enabled,
// by what, phase, revision, values checksum, last run, last error,
// maintenance and message. The Publisher adds what the module's directory
// says (chart, namespace, chart version, labels, warnings).
type StateFunc func(name string) moduleobject.State

// Publisher publishes every module's state as its Module object. A nil
// *Publisher publishes nothing: its methods do nothing and Run returns at
// once.
type Publisher struct {
	writer Writer
	mods   *module.Set
	state  StateFunc
	// namespace is the releases' namespace of modules whose module.yaml
	// names none.
	namespace string
	// chartVersions are read once, by New: the module directories do not
	// change while the operator runs.
	chartVersions map[string]string
	// pruneOnce prunes the objects at the first plan.
	pruneOnce sync.Once
	// runNow runs a module whose object asks for a run; requests holds
	// those requests.
	runNow   RunNowFunc
	requests reconcileRequests
}

// New returns the Publisher of the modules of mods through w, reading
// their states with state, or nil when w is nil. When w hears reconcile
// requests on the objects (*moduleobject.Writer does), runNow runs the
// module asked for.
func New(w Writer, mods *module.Set, namespace string, state StateFunc, runNow RunNowFunc) *Publisher {
	if w == nil {
		return nil
	}
	p := &Publisher{writer: w, mods: mods, state: state, namespace: namespace, chartVersions: map[string]string{}, runNow: runNow,
		requests: reconcileRequests{waiting: map[string]string{}, handled: map[string]string{}}}
	if r, ok := w.(reconcileSource); ok {
		r.OnReconcileRequest(p.reconcileRequested)
	}
	for _, m := range mods.Modules() {
		if m.HasChartYAML() {
			p.chartVersions[m.Name()] = moduleobject.ChartVersion(m.Path())
		}
	}
	return p
}

// Publish hands a module's state to the writer; module state calls it
// after every change. It never blocks.
func (p *Publisher) Publish(name string) {
	if p == nil {
		return
	}
	m, ok := p.mods.Module(name)
	if !ok {
		return
	}
	s := p.state(name)
	s.Name, s.HasChart, s.Namespace = name, m.IsHelm(), cmp.Or(m.Namespace(), p.namespace)
	s.ChartVersion, s.Labels, s.Warnings = p.chartVersions[name], definitionLabels(m), m.Warnings()
	s.LastHandledReconcileAt = p.handledRequest(name)
	p.writer.Update(s)
}

// Run publishes every module once and runs the writer until ctx ends; the
// writer writes from the first converge's plan on (Planned).
func (p *Publisher) Run(ctx context.Context) error {
	if p == nil {
		return nil
	}
	for _, m := range p.mods.Modules() {
		p.Publish(m.Name())
	}
	return p.writer.Run(ctx)
}

// Planned lets the Module objects be written once the enabled state is
// decided, and prunes the objects of modules that are gone; and it holds
// their writes until the converge is done (Converged), so they do not
// compete with its module runs for the API server. Called after each
// converge plan; pruning happens once.
func (p *Publisher) Planned() {
	if p == nil {
		return
	}
	p.writer.Hold(true)
	p.planReconciles()
	p.pruneOnce.Do(func() {
		names := make([]string, 0, len(p.mods.Modules()))
		for _, m := range p.mods.Modules() {
			names = append(names, m.Name())
		}
		p.writer.Prune(names)
	})
}

// Converged releases the writes held during a converge.
func (p *Publisher) Converged() {
	if p != nil {
		p.writer.Hold(false)
	}
}

// Enabled reports whether anything is published: a deploy computes the
// values checksum the objects show only then.
func (p *Publisher) Enabled() bool { return p != nil }

// definitionLabels are the Module object labels of a module's
// module.yaml fields.
func definitionLabels(m *module.Module) map[string]string {
	def := m.Definition()
	return moduleobject.DefinitionLabels(m.Critical(), def.Stage, m.ExclusiveGroup(), def.Tags, def.Subsystems)
}
