// Package metrics owns the operator's Prometheus metrics: a typed Recorder
// for the operator's own metrics and HookMetrics, the sink for the metrics
// hooks emit through METRICS_PATH, each on its own registry.
package metrics
