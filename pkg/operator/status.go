package operator

import "github.com/addon-operator/addon-operator/pkg/operator/inspect"

// Inspect returns what the debug API and the status page read of the
// operator: its queues, values, configuration and renders.
func (o *Operator) Inspect() *inspect.View {
	return inspect.New(o.queues.Snapshots, o.store, o.modules, o.releases)
}
