package metrics

import "github.com/prometheus/client_golang/prometheus"

// newModuleObjectWrites counts the operator's writes of Module objects.
func newModuleObjectWrites() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "addon_operator_module_object_writes_total",
		Help: "Writes of Module objects (addon-operator.io) by operation: create, status or delete; unchanged states write nothing.",
	}, []string{"operation"})
}

// ModuleObjectWrite records one write of a Module object: operation is
// create, status or delete.
func (r *Recorder) ModuleObjectWrite(operation string) {
	r.moduleObjectWrites.WithLabelValues(operation).Inc()
}
