package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The values of the outcome label.
const (
	outcomeSuccess  = "success"
	outcomeError    = "error"
	outcomeCanceled = "canceled" // the run's context was cancelled (shutdown)
)

// outcome classifies the error a run ended with.
func outcome(err error) string {
	switch {
	case err == nil:
		return outcomeSuccess
	case errors.Is(err, context.Canceled):
		return outcomeCanceled
	default:
		return outcomeError
	}
}

// durationBuckets span a fast hook (5 ms) to a slow Helm upgrade (5 min).
func durationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
}

// Recorder records the operator's own metrics, named addon_operator_*, on
// its own registry, together with the Go runtime and process collectors.
// Labels are bounded: module, hook, binding, queue, operation and outcome
// (success, error, or canceled when the run's context was cancelled); global
// hooks have an empty module. The zero value is not usable; the methods are
// safe for concurrent use.
type Recorder struct {
	registry *prometheus.Registry

	hookRunSeconds       *prometheus.HistogramVec
	hookRuns             *prometheus.CounterVec
	hookAllowedErrors    *prometheus.CounterVec
	moduleRunSeconds     *prometheus.HistogramVec
	moduleRuns           *prometheus.CounterVec
	helmOperationSeconds *prometheus.HistogramVec
	queueLength          *prometheus.GaugeVec
	queueWaitSeconds     *prometheus.HistogramVec
	convergeSeconds      prometheus.Histogram
	converges            *prometheus.CounterVec
	configErrors         prometheus.Counter
	configMapPresent     prometheus.Gauge
	configHeld           *prometheus.GaugeVec
	healedObjects        *prometheus.CounterVec
	driftedObjects       *prometheus.GaugeVec
	moduleReady          *prometheus.GaugeVec
	moduleWaitingFor     *prometheus.GaugeVec
	moduleMaintenance    *prometheus.GaugeVec
	remediations         *prometheus.CounterVec
	kubeClient           kubeClientMetrics
	moduleObjectWrites   *prometheus.CounterVec
}

// NewRecorder returns a Recorder with every metric registered on a new
// registry.
func NewRecorder() *Recorder {
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "addon_operator_" + name, Help: help, Buckets: durationBuckets(),
		}, labels)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "addon_operator_" + name, Help: help}, labels)
	}
	r := &Recorder{
		registry:             prometheus.NewRegistry(),
		hookRunSeconds:       histogram("hook_run_seconds", "Duration of hook runs.", "module", "hook", "binding"),
		hookRuns:             counter("hook_runs_total", "Hook runs by outcome.", "module", "hook", "binding", "outcome"),
		hookAllowedErrors:    counter("hook_allowed_errors_total", "Failed hook runs whose binding has allowFailure.", "module", "hook", "binding"),
		moduleRunSeconds:     histogram("module_run_seconds", "Duration of module runs.", "module"),
		moduleRuns:           counter("module_runs_total", "Module runs by outcome.", "module", "outcome"),
		helmOperationSeconds: histogram("helm_operation_seconds", "Duration of Helm operations.", "module", "operation"),
		queueLength: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_queue_length", Help: "Tasks in a queue.",
		}, []string{"queue"}),
		queueWaitSeconds: histogram("queue_wait_seconds", "Time tasks wait in a queue before they start.", "queue"),
		convergeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "addon_operator_converge_seconds", Help: "Duration of converges.", Buckets: durationBuckets(),
		}),
		converges: counter("converges_total", "Converges by outcome.", "outcome"),
		configErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "addon_operator_config_errors_total", Help: "Invalid user configurations seen.",
		}),
		configMapPresent: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addon_operator_config_map_present",
			Help: "1 while the users' ConfigMap exists, 0 while it does not (not created yet, or deleted).",
		}),
		configHeld: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_config_held",
			Help: "1 for the reason the last accepted configuration is held instead of what its source says (ConfigMapMissing, NoModuleConfigs, EmptyUnconfirmed, ConfigInvalid), 0 for the others.",
		}, []string{"reason"}),
		healedObjects: counter("healed_objects_total", "Managed objects restored after they were deleted or changed.", "module"),
		driftedObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_drifted_objects", Help: "Release objects that drifted from their release at the module's last check.",
		}, []string{"module"}),
		moduleReady: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_module_ready",
			Help: "1 when the module's release objects were ready after its last run, 0 while a run waits for them or after it gave up.",
		}, []string{"module"}),
		moduleWaitingFor: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_module_waiting_for",
			Help: "1 for the kind of the release object a module's run waits for to be ready; the object is named in the status page.",
		}, []string{"module", "kind"}),
		moduleMaintenance: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "addon_operator_module_maintenance", Help: "1 while the module is in maintenance: its release is left as it is.",
		}, []string{"module"}),
		remediations:       counter("remediations_total", "Failed releases remediated, by action (rollback, uninstall) and outcome.", "module", "action", "outcome"),
		kubeClient:         newKubeClientMetrics(),
		moduleObjectWrites: newModuleObjectWrites(),
	}
	r.registry.MustRegister(r.kubeClient.collectors()...)
	r.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.hookRunSeconds, r.hookRuns, r.hookAllowedErrors, r.moduleRunSeconds, r.moduleRuns,
		r.helmOperationSeconds, r.queueLength, r.queueWaitSeconds, r.convergeSeconds, r.converges,
		r.configErrors, r.configMapPresent, r.configHeld, r.healedObjects, r.driftedObjects,
		r.moduleReady, r.moduleWaitingFor,
		r.moduleMaintenance, r.remediations,
		r.moduleObjectWrites,
	)
	return r
}

// Handler serves the operator's metrics in the Prometheus exposition format.
func (r *Recorder) Handler() http.Handler {
	return promhttp.HandlerFor(r.registry, promhttp.HandlerOpts{})
}

// Gatherer returns the registry the operator's metrics are on.
func (r *Recorder) Gatherer() prometheus.Gatherer { return r.registry }

// HookRun records a finished hook run of a binding (the binding's name, or
// the lifecycle binding such as "beforeHelm") that took d and ended with
// err. A failure that allowFailure lets pass is still a failed run here;
// also report it with HookAllowedError.
func (r *Recorder) HookRun(module, hook, binding string, d time.Duration, err error) {
	r.hookRunSeconds.WithLabelValues(module, hook, binding).Observe(d.Seconds())
	r.hookRuns.WithLabelValues(module, hook, binding, outcome(err)).Inc()
}

// HookAllowedError records a failed run that did not fail its task because
// the binding has allowFailure.
func (r *Recorder) HookAllowedError(module, hook, binding string) {
	r.hookAllowedErrors.WithLabelValues(module, hook, binding).Inc()
}

// ModuleRun records a finished module run (hooks and Helm) that took d and
// ended with err.
func (r *Recorder) ModuleRun(module string, d time.Duration, err error) {
	r.moduleRunSeconds.WithLabelValues(module).Observe(d.Seconds())
	r.moduleRuns.WithLabelValues(module, outcome(err)).Inc()
}

// HelmOperation records a Helm operation of a module that took d. The
// operation is one of a small fixed set chosen by the caller (such as
// "render", "upgrade", "uninstall"), never a release or object name.
func (r *Recorder) HelmOperation(module, operation string, d time.Duration) {
	r.helmOperationSeconds.WithLabelValues(module, operation).Observe(d.Seconds())
}

// QueueLength sets the number of tasks in a queue.
func (r *Recorder) QueueLength(queue string, n int) {
	r.queueLength.WithLabelValues(queue).Set(float64(n))
}

// QueueWait records how long a task waited in a queue before it started.
func (r *Recorder) QueueWait(queue string, d time.Duration) {
	r.queueWaitSeconds.WithLabelValues(queue).Observe(d.Seconds())
}

// Converge records a finished converge that took d and ended with err.
func (r *Recorder) Converge(d time.Duration, err error) {
	r.convergeSeconds.Observe(d.Seconds())
	r.converges.WithLabelValues(outcome(err)).Inc()
}

// ConfigError records a rejected user configuration (a ConfigMap that does
// not parse, or whose sections fail their schemas), once per change seen,
// not per retry.
func (r *Recorder) ConfigError() {
	r.configErrors.Inc()
}

// ConfigMapPresent sets whether the users' ConfigMap exists.
func (r *Recorder) ConfigMapPresent(present bool) {
	v := 0.0
	if present {
		v = 1
	}
	r.configMapPresent.Set(v)
}

// DriftedObjects sets how many of a module's release objects drifted
// from the release at its last check.
func (r *Recorder) DriftedObjects(module string, n int) {
	r.driftedObjects.WithLabelValues(module).Set(float64(n))
}

// ObjectsHealed records n managed objects of a module restored after they
// were deleted or changed; n <= 0 records nothing.
func (r *Recorder) ObjectsHealed(module string, n int) {
	if n <= 0 {
		return
	}
	r.healedObjects.WithLabelValues(module).Add(float64(n))
}

// ModuleReadiness records whether a module's release objects are ready
// and, while they are not, the kind of the object awaited ("" for none).
func (r *Recorder) ModuleReadiness(module string, ready bool, awaitedKind string) {
	v := 0.0
	if ready {
		v = 1
	}
	r.moduleReady.WithLabelValues(module).Set(v)
	r.moduleWaitingFor.DeletePartialMatch(prometheus.Labels{"module": module})
	if !ready && awaitedKind != "" {
		r.moduleWaitingFor.WithLabelValues(module, awaitedKind).Set(1)
	}
}
