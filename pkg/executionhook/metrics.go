package executionhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Action names, the values of the metrics' action label.
const (
	actionPre  = "pre"
	actionPost = "post"
)

// Results of one action in one container, the values of the result label.
const (
	resultSuccess = "success"
	resultFailure = "failure"
	resultTimeout = "timeout"
)

// Metrics is the controller's Prometheus registry and the series it
// records. Labels are bounded: action (pre, post) and result.
type Metrics struct {
	registry *prometheus.Registry
	runs     *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
	hooks    prometheus.Gauge
}

// NewMetrics returns Metrics over a registry of their own, with the Go and
// process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addon_operator_execution_hook_action_runs_total",
			Help: "Actions run in one container, by action (pre, post) and result (success, failure, timeout).",
		}, []string{"action", "result"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addon_operator_execution_hook_action_failures_total",
			Help: "Actions that ended without success in one container (failure or timeout), by action.",
		}, []string{"action"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "addon_operator_execution_hook_action_duration_seconds",
			Help:    "How long an action took in one container, retries included, by action.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"action"}),
		hooks: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addon_operator_execution_hook_reconciles_in_flight",
			Help: "ExecutionHooks being reconciled right now.",
		}),
	}
	m.registry.MustRegister(m.runs, m.failures, m.duration, m.hooks,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, a := range []string{actionPre, actionPost} {
		m.failures.WithLabelValues(a)
		m.duration.WithLabelValues(a)
		for _, r := range []string{resultSuccess, resultFailure, resultTimeout} {
			m.runs.WithLabelValues(a, r)
		}
	}
	return m
}

// observe records one action's end in one container.
func (m *Metrics) observe(action, result string, took time.Duration) {
	m.runs.WithLabelValues(action, result).Inc()
	m.duration.WithLabelValues(action).Observe(took.Seconds())
	if result != resultSuccess {
		m.failures.WithLabelValues(action).Inc()
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
