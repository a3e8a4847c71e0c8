package metrics

import (
	"fmt"
	"slices"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// family is one hook metric name: its kind, label names, buckets and series.
type family struct {
	kind       Action // ActionAdd: counter, ActionSet: gauge, ActionObserve: histogram
	labelNames []string
	buckets    []float64 // histograms only
	desc       *prometheus.Desc
	series     map[string]*series // by joined label values
}

// series is one label combination of a family.
type series struct {
	labelValues []string
	group       string
	value       float64 // counters and gauges
	// Histograms: observations per bucket (not cumulative), then in total.
	buckets []uint64
	count   uint64
	sum     float64
}

func newFamily(o *op) *family {
	f := &family{
		kind:       o.Action,
		labelNames: o.labelNames,
		// Like the reference, the help text is the name.
		desc:   prometheus.NewDesc(o.Name, o.Name, o.labelNames, nil),
		series: map[string]*series{},
	}
	if o.Action == ActionObserve {
		f.buckets = slices.Clone(o.Buckets)
		if len(f.buckets) == 0 {
			f.buckets = slices.Clone(prometheus.DefBuckets)
		}
	}
	return f
}

// kindName is how an error names the kind an action makes.
func kindName(a Action) string {
	switch a {
	case ActionAdd:
		return "counter"
	case ActionSet:
		return "gauge"
	default:
		return "histogram"
	}
}

// accepts returns an ErrConflict when o cannot be a series of f.
func (f *family) accepts(o *op) error {
	if o.Action != f.kind {
		return fmt.Errorf("action %q would make a %s, but it is a %s: %w",
			o.Action, kindName(o.Action), kindName(f.kind), ErrConflict)
	}
	if !slices.Equal(o.labelNames, f.labelNames) {
		return fmt.Errorf("labels %q differ from its label names %q: %w", o.labelNames, f.labelNames, ErrConflict)
	}
	return nil
}

// observe records v in a histogram series with the family's bounds.
func (s *series) observe(bounds []float64, v float64) {
	if i := sort.SearchFloat64s(bounds, v); i < len(bounds) {
		s.buckets[i]++
	}
	s.count++
	s.sum += v
}

// metric returns a snapshot of s.
func (f *family) metric(s *series) prometheus.Metric {
	var (
		m   prometheus.Metric
		err error
	)
	switch f.kind {
	case ActionAdd:
		m, err = prometheus.NewConstMetric(f.desc, prometheus.CounterValue, s.value, s.labelValues...)
	case ActionSet:
		m, err = prometheus.NewConstMetric(f.desc, prometheus.GaugeValue, s.value, s.labelValues...)
	default:
		cumulative := make(map[float64]uint64, len(f.buckets))
		var n uint64
		for i, b := range f.buckets {
			n += s.buckets[i]
			cumulative[b] = n
		}
		m, err = prometheus.NewConstHistogram(f.desc, s.count, s.sum, cumulative, s.labelValues...)
	}
	if err != nil {
		return prometheus.NewInvalidMetric(f.desc, err)
	}
	return m
}
