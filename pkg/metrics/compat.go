package metrics

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// compatRule derives one metric under the established addon-operator's
// name from one of ours: the series that match, with labels dropped
// (series that become equal are added up) and, for toSum, a histogram's
// sum served as a counter.
type compatRule struct {
	name, from string
	match      map[string]string // label values the series must have ("" matches absent too)
	notEmpty   string            // a label that must not be empty
	drop       []string
	toSum      bool // histogram -> counter of its sum
}

// compatRules maps the established names to ours; docs/migration.md
// lists them, and the names without an equivalent.
func compatRules() []compatRule {
	hook := []string{"outcome"}
	return []compatRule{
		{name: "addon_operator_module_hook_run_seconds", from: "addon_operator_hook_run_seconds", notEmpty: "module"},
		{name: "addon_operator_global_hook_run_seconds", from: "addon_operator_hook_run_seconds", match: map[string]string{"module": ""}, drop: []string{"module"}},
		{name: "addon_operator_module_hook_success_total", from: "addon_operator_hook_runs_total", notEmpty: "module", match: map[string]string{"outcome": "success"}, drop: hook},
		{name: "addon_operator_module_hook_errors_total", from: "addon_operator_hook_runs_total", notEmpty: "module", match: map[string]string{"outcome": "error"}, drop: hook},
		{name: "addon_operator_global_hook_success_total", from: "addon_operator_hook_runs_total", match: map[string]string{"module": "", "outcome": "success"}, drop: []string{"module", "outcome"}},
		{name: "addon_operator_global_hook_errors_total", from: "addon_operator_hook_runs_total", match: map[string]string{"module": "", "outcome": "error"}, drop: []string{"module", "outcome"}},
		{name: "addon_operator_module_hook_allowed_errors_total", from: "addon_operator_hook_allowed_errors_total", notEmpty: "module"},
		{name: "addon_operator_global_hook_allowed_errors_total", from: "addon_operator_hook_allowed_errors_total", match: map[string]string{"module": ""}, drop: []string{"module"}},
		{name: "addon_operator_module_run_errors_total", from: "addon_operator_module_runs_total", match: map[string]string{"outcome": "error"}, drop: hook},
		{name: "addon_operator_module_helm_seconds", from: "addon_operator_helm_operation_seconds", match: map[string]string{"operation": "upgrade"}, drop: []string{"operation"}},
		{name: "addon_operator_convergence_seconds", from: "addon_operator_converge_seconds", toSum: true},
		{name: "addon_operator_convergence_total", from: "addon_operator_converges_total", drop: hook},
		{name: "addon_operator_tasks_queue_length", from: "addon_operator_queue_length"},
		{name: "addon_operator_task_wait_in_queue_seconds_total", from: "addon_operator_queue_wait_seconds", toSum: true},
		{name: "addon_operator_config_values_errors_total", from: "addon_operator_config_errors_total"},
		{name: "addon_operator_modules_absent_resources_total", from: "addon_operator_healed_objects_total"},
	}
}

// CompatHandler serves the Recorder's metrics and, next to them, the
// established addon-operator's names derived from them (compatRules),
// and addon_operator_live_ticks: a counter that grows by one every 10
// seconds of the process's life, as the established one does. now is the
// clock live_ticks reads.
func (r *Recorder) CompatHandler(now func() time.Time) http.Handler {
	return promhttp.HandlerFor(compatGatherer{g: r.registry, now: now, start: now()}, promhttp.HandlerOpts{})
}

type compatGatherer struct {
	g     prometheus.Gatherer
	now   func() time.Time
	start time.Time
}

// Gather returns g's families and the derived ones, sorted by name.
func (c compatGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := c.g.Gather()
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		byName[mf.GetName()] = mf
	}
	for _, rule := range compatRules() {
		if src, ok := byName[rule.from]; ok {
			if mf := rule.derive(src); len(mf.GetMetric()) > 0 {
				mfs = append(mfs, mf)
			}
		}
	}
	ticks := math.Floor(c.now().Sub(c.start).Seconds() / 10)
	mfs = append(mfs, &dto.MetricFamily{
		Name: proto.String("addon_operator_live_ticks"), Help: proto.String("Grows by one every 10 seconds of the operator's life."),
		Type: dto.MetricType_COUNTER.Enum(), Metric: []*dto.Metric{{Counter: &dto.Counter{Value: proto.Float64(ticks)}}},
	})
	slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return mfs, err
}

// derive makes the rule's family out of src.
func (rule compatRule) derive(src *dto.MetricFamily) *dto.MetricFamily {
	typ := src.GetType()
	if rule.toSum {
		typ = dto.MetricType_COUNTER
	}
	out := &dto.MetricFamily{Name: proto.String(rule.name), Help: proto.String("Established name of " + rule.from + "."), Type: typ.Enum()}
	byLabels := map[string]*dto.Metric{}
	for _, m := range src.GetMetric() {
		if !rule.matches(m) {
			continue
		}
		var labels []*dto.LabelPair
		for _, l := range m.GetLabel() {
			if !slices.Contains(rule.drop, l.GetName()) {
				labels = append(labels, l)
			}
		}
		key := labelKey(labels)
		next := convert(m, labels, rule.toSum)
		if prev, ok := byLabels[key]; ok {
			add(prev, next)
			continue
		}
		byLabels[key] = next
		out.Metric = append(out.Metric, next)
	}
	return out
}

func (rule compatRule) matches(m *dto.Metric) bool {
	values := map[string]string{}
	for _, l := range m.GetLabel() {
		values[l.GetName()] = l.GetValue()
	}
	for k, v := range rule.match {
		if values[k] != v {
			return false
		}
	}
	return rule.notEmpty == "" || values[rule.notEmpty] != ""
}

func labelKey(labels []*dto.LabelPair) string {
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(parts, ",")
}

// convert copies m with labels; toSum turns a histogram into the counter
// of its sum.
func convert(m *dto.Metric, labels []*dto.LabelPair, toSum bool) *dto.Metric {
	out := proto.Clone(m).(*dto.Metric)
	out.Label = labels
	if toSum {
		out.Histogram = nil
		out.Counter = &dto.Counter{Value: proto.Float64(m.GetHistogram().GetSampleSum())}
	}
	return out
}

// add adds next's values into prev: series that dropping labels made one.
func add(prev, next *dto.Metric) {
	switch {
	case prev.Counter != nil:
		prev.Counter.Value = proto.Float64(prev.Counter.GetValue() + next.GetCounter().GetValue())
	case prev.Gauge != nil:
		prev.Gauge.Value = proto.Float64(prev.Gauge.GetValue() + next.GetGauge().GetValue())
	case prev.Histogram != nil:
		h, n := prev.Histogram, next.GetHistogram()
		h.SampleCount = proto.Uint64(h.GetSampleCount() + n.GetSampleCount())
		h.SampleSum = proto.Float64(h.GetSampleSum() + n.GetSampleSum())
		for i, b := range h.GetBucket() {
			if i < len(n.GetBucket()) {
				b.CumulativeCount = proto.Uint64(b.GetCumulativeCount() + n.GetBucket()[i].GetCumulativeCount())
			}
		}
	}
}
