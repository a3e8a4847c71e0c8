package metrics

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrConflict is matched (errors.Is) by Apply's error when a metric
// contradicts what is already known about its name: another kind, another
// label set, or a name a histogram's series use (x_bucket, x_sum, x_count).
var ErrConflict = errors.New("metric conflict")

// The labels HookMetrics adds to every hook metric. They override labels
// of the same name a hook sets, so a hook cannot pose as another.
const (
	labelHook   = "hook"
	labelModule = "module"
)

// Source names the hook that emitted a batch of metrics.
type Source struct {
	// Hook becomes the "hook" label.
	Hook string
	// Module becomes the "module" label; it is empty for global hooks, and
	// an empty label is the same as no label to Prometheus.
	Module string
}

// HookMetrics holds the metrics hooks emit through METRICS_PATH and exposes
// them on its own registry (served on /metrics/hooks). Names are used as
// given. add makes a counter, set a gauge, observe a histogram; a name keeps
// its kind, its label names and its histogram buckets for as long as it has
// series. Ungrouped series live until the process exits; grouped series
// live until the next batch carrying their group or an expire of it.
// HookMetrics owns its state and is safe for concurrent use.
type HookMetrics struct {
	registry *prometheus.Registry

	mu       sync.Mutex
	families map[string]*family // by metric name
}

// NewHookMetrics returns an empty HookMetrics registered on a new registry.
func NewHookMetrics() *HookMetrics {
	h := &HookMetrics{registry: prometheus.NewRegistry(), families: map[string]*family{}}
	// An unchecked collector (no descriptors) registers without error.
	h.registry.MustRegister(h)
	return h
}

// Handler serves the hook metrics in the Prometheus exposition format.
func (h *HookMetrics) Handler() http.Handler {
	return promhttp.HandlerFor(h.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Gatherer returns the registry the hook metrics are on.
func (h *HookMetrics) Gatherer() prometheus.Gatherer { return h.registry }

// Describe sends nothing: HookMetrics is an unchecked collector, as its
// metric names are only known once hooks emit them.
func (h *HookMetrics) Describe(chan<- *prometheus.Desc) {}

// Collect sends a snapshot of every series.
func (h *HookMetrics) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	var ms []prometheus.Metric
	for _, f := range h.families {
		for _, s := range f.series {
			ms = append(ms, f.metric(s))
		}
	}
	h.mu.Unlock()
	for _, m := range ms {
		ch <- m
	}
}

// Apply applies a hook's batch of metrics, in order, with the labels of
// src merged into each metric's labels. The first metric of a group in the
// batch removes every series of that group (from any hook), so the group
// then holds exactly what the batch emits: a grouped counter restarts from
// the batch's sum. An expire removes every series of its group, including
// ones added earlier in the batch. A series belongs to the group of the
// metric that last wrote it. Apply is all or nothing: an invalid metric or
// an ErrConflict leaves every series as it was.
func (h *HookMetrics) Apply(src Source, ms []HookMetric) error {
	ops := make([]op, len(ms))
	for i := range ms {
		if field, err := ms[i].check(); err != nil {
			return fmt.Errorf("metric %d: field %q: %w", i, field, err)
		}
		ops[i] = newOp(src, ms[i])
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkFamilies(ops); err != nil {
		return err
	}
	cleared := map[string]bool{}
	for i := range ops {
		o := &ops[i]
		if o.Group != "" && !cleared[o.Group] {
			h.expire(o.Group)
			cleared[o.Group] = true
		}
		if o.Action == ActionExpire {
			h.expire(o.Group)
			continue
		}
		h.write(o)
	}
	maps.DeleteFunc(h.families, func(_ string, f *family) bool { return len(f.series) == 0 })
	return nil
}

// op is a validated metric with its final labels.
type op struct {
	HookMetric
	labelNames  []string // sorted
	labelValues []string // in labelNames order
}

func newOp(src Source, m HookMetric) op {
	labels := maps.Clone(m.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelHook] = src.Hook
	labels[labelModule] = src.Module
	o := op{HookMetric: m, labelNames: slices.Sorted(maps.Keys(labels))}
	for _, n := range o.labelNames {
		o.labelValues = append(o.labelValues, labels[n])
	}
	return o
}

// checkFamilies returns an ErrConflict for the first metric of ops whose
// kind or label names differ from its family's, existing or created by an
// earlier metric of the batch, or whose name clashes with a histogram's.
func (h *HookMetrics) checkFamilies(ops []op) error {
	planned := map[string]*family{}
	lookup := func(name string) *family {
		if f, ok := h.families[name]; ok {
			return f
		}
		return planned[name]
	}
	for i := range ops {
		o := &ops[i]
		if o.Action == ActionExpire {
			continue
		}
		if f := lookup(o.Name); f != nil {
			if err := f.accepts(o); err != nil {
				return fmt.Errorf("metric %d: %q: %w", i, o.Name, err)
			}
			continue
		}
		if other := clash(o.Name, o.Action, lookup); other != "" {
			return fmt.Errorf("metric %d: %q clashes with the series of histogram %q: %w", i, o.Name, other, ErrConflict)
		}
		planned[o.Name] = &family{kind: o.Action, labelNames: o.labelNames}
	}
	return nil
}

// histogramSuffixes are the suffixes of the series a histogram exposes.
func histogramSuffixes() []string { return []string{"_bucket", "_sum", "_count"} }

// clash returns the histogram whose exposed series a new metric name and
// kind would collide with, or "".
func clash(name string, kind Action, lookup func(string) *family) string {
	for _, sfx := range histogramSuffixes() {
		if base, ok := strings.CutSuffix(name, sfx); ok {
			if f := lookup(base); f != nil && f.kind == ActionObserve {
				return base
			}
		}
		if kind == ActionObserve && lookup(name+sfx) != nil {
			return name
		}
	}
	return ""
}

// write applies a non-expire op to its series.
func (h *HookMetrics) write(o *op) {
	f, ok := h.families[o.Name]
	if !ok {
		f = newFamily(o)
		h.families[o.Name] = f
	}
	key := strings.Join(o.labelValues, "\xff")
	s, ok := f.series[key]
	if !ok {
		s = &series{labelValues: o.labelValues}
		if f.kind == ActionObserve {
			s.buckets = make([]uint64, len(f.buckets))
		}
		f.series[key] = s
	}
	s.group = o.Group
	switch f.kind {
	case ActionAdd:
		s.value += o.Value
	case ActionSet:
		s.value = o.Value
	case ActionObserve:
		s.observe(f.buckets, o.Value)
	}
}

// expire removes every series of group.
func (h *HookMetrics) expire(group string) {
	for _, f := range h.families {
		maps.DeleteFunc(f.series, func(_ string, s *series) bool { return s.group == group })
	}
}
