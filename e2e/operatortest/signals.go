package operatortest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// The signals a run gives besides its log: /readyz and /metrics on its HTTP
// listener, module states on its debug socket. Tests wait on these where
// they say what the test waits for, and on log lines only where the line
// itself is what the test checks.

// URL returns the base URL of the run's HTTP listener, such as
// http://127.0.0.1:41234, waiting until it listens. The run listens on a
// port the kernel picks (unless the test gives --listen-address), and its
// "http server listening" line is the one place that names the port.
func (op *Operator) URL() string {
	op.t.Helper()
	if op.url != "" {
		return op.url
	}
	ctx, cancel := context.WithTimeout(op.t.Context(), Timeout)
	defer cancel()
	i, err := op.log.Wait(ctx, 0, func(l Line) bool { return l.Msg == "http server listening" })
	if err != nil {
		op.t.Fatalf("wait for %s's HTTP listener: %v", op.name, err)
	}
	scheme := "http://"
	if op.tls {
		scheme = "https://"
	}
	op.url = scheme + op.log.Lines()[i].Attr("name")
	return op.url
}

// get returns the status code and body of a GET of path on the run's HTTP
// listener; err is set when there is no answer. With --listen-tls, the
// run's certificate is self-signed, so it is not verified.
func (op *Operator) get(path string) (code int, body string, err error) {
	op.t.Helper()
	url := op.URL() + path
	if !op.tls {
		return HTTPGet(op.t, url)
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // G402: the run's certificate is self-signed
	}}
	defer client.CloseIdleConnections()
	return httpGet(op.t, client, url)
}

// Debug returns a client of the run's debug API on its socket.
func (op *Operator) Debug() *server.Client {
	if op.debug == nil {
		op.debug = server.NewSocketClient(op.socket)
	}
	return op.debug
}

// WaitReady waits until the run's /readyz answers 200: its first converge
// is done and nothing keeps it unready.
func (op *Operator) WaitReady() {
	op.t.Helper()
	Poll(op.t, op.name+"'s /readyz to answer 200", func() bool {
		code, _, _ := op.get("/readyz")
		return code == http.StatusOK
	})
}

// WaitCondition waits until /readyz names a condition of type typ (see
// status.Condition) whose message contains every one of parts.
func (op *Operator) WaitCondition(typ string, parts ...string) {
	op.t.Helper()
	Poll(op.t, fmt.Sprintf("/readyz to name condition %s with %q", typ, parts), func() bool {
		_, body, _ := op.get("/readyz")
		for line := range strings.SplitSeq(body, "\n") {
			msg, ok := strings.CutPrefix(line, "warning: "+typ+": ")
			if ok && containsAll(msg, parts) {
				return true
			}
		}
		return false
	})
}

// Module returns the status of module name from the debug API; ok is
// false when the operator does not answer or has no such module.
func (op *Operator) Module(name string) (m status.ModuleStatus, ok bool) {
	op.t.Helper()
	mods, err := op.Debug().Modules(op.t.Context())
	if err != nil {
		return status.ModuleStatus{}, false
	}
	i := slices.IndexFunc(mods, func(m status.ModuleStatus) bool { return m.Name == name })
	if i < 0 {
		return status.ModuleStatus{}, false
	}
	return mods[i], true
}

// WaitModule waits until the status of module name satisfies cond, what
// naming the condition, and returns that status.
func (op *Operator) WaitModule(name, what string, cond func(status.ModuleStatus) bool) status.ModuleStatus {
	op.t.Helper()
	var last status.ModuleStatus
	Poll(op.t, fmt.Sprintf("module %s: %s", name, what), func() bool {
		m, ok := op.Module(name)
		last = m
		return ok && cond(m)
	})
	return last
}

// Metric returns the sum of the samples of metric name, a counter or a
// gauge, whose labels include labels (nil: every sample); 0 when there is
// none. The test fails if /metrics does not answer (it needs a token
// under --metrics-auth).
func (op *Operator) Metric(name string, labels map[string]string) float64 {
	op.t.Helper()
	v, err := op.scrape(name, labels)
	if err != nil {
		op.t.Fatal(err)
	}
	return v
}

// WaitMetric waits until Metric(name, labels) satisfies cond and returns
// that value.
func (op *Operator) WaitMetric(name string, labels map[string]string, what string, cond func(float64) bool) float64 {
	op.t.Helper()
	var v float64
	Poll(op.t, fmt.Sprintf("%s%v %s", name, labels, what), func() bool {
		var err error
		v, err = op.scrape(name, labels)
		return err == nil && cond(v)
	})
	return v
}

// scrape reads /metrics and sums the samples Metric describes.
func (op *Operator) scrape(name string, labels map[string]string) (float64, error) {
	code, body, err := op.get("/metrics")
	if err != nil {
		return 0, fmt.Errorf("get %s/metrics: %w", op.url, err)
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("get %s/metrics: HTTP %d: %s", op.url, code, body)
	}
	v, err := sumSamples(body, name, labels)
	if err != nil {
		return 0, fmt.Errorf("read %s/metrics: %w", op.url, err)
	}
	return v, nil
}

// sumSamples parses metrics in the Prometheus text format and sums the
// samples of the counter or gauge name whose labels include labels.
func sumSamples(text, name string, labels map[string]string) (float64, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return 0, fmt.Errorf("parse metrics: %w", err)
	}
	total := 0.0
	for _, m := range families[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if !includes(have, labels) {
			continue
		}
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return total, nil
}

// includes reports whether have holds every label of want with its value.
func includes(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Newest returns the run started last; the test fails if none was.
func (h *Harness) Newest() *Operator {
	h.T.Helper()
	if len(h.runs) == 0 {
		h.T.Fatal("no run of the operator started")
	}
	return h.runs[len(h.runs)-1]
}

// WaitReady is Operator.WaitReady of the newest run.
func (h *Harness) WaitReady() {
	h.T.Helper()
	h.Newest().WaitReady()
}

// WaitCondition is Operator.WaitCondition of the newest run.
func (h *Harness) WaitCondition(typ string, parts ...string) {
	h.T.Helper()
	h.Newest().WaitCondition(typ, parts...)
}

// WaitModule is Operator.WaitModule of the newest run.
func (h *Harness) WaitModule(name, what string, cond func(status.ModuleStatus) bool) status.ModuleStatus {
	h.T.Helper()
	return h.Newest().WaitModule(name, what, cond)
}

// Metric is Operator.Metric of the newest run.
func (h *Harness) Metric(name string, labels map[string]string) float64 {
	h.T.Helper()
	return h.Newest().Metric(name, labels)
}

// WaitMetric is Operator.WaitMetric of the newest run.
func (h *Harness) WaitMetric(name string, labels map[string]string, what string, cond func(float64) bool) float64 {
	h.T.Helper()
	return h.Newest().WaitMetric(name, labels, what, cond)
}

// ModuleRuns is the metric of module runs, with labels module and outcome
// (success, error, canceled).
const ModuleRuns = "addon_operator_module_runs_total"

// RunsOf returns the labels of module's runs with outcome.
func RunsOf(module, outcome string) map[string]string {
	return map[string]string{"module": module, "outcome": outcome}
}

// ConfigErrors is the metric of ConfigMap contents rejected, once per
// change seen.
const ConfigErrors = "addon_operator_config_errors_total"

// AtLeast returns a condition for WaitMetric: the value is n or more.
func AtLeast(n float64) func(float64) bool { return func(v float64) bool { return v >= n } }

// ErrorContains returns a condition for WaitModule: the module's last
// error contains every one of parts.
func ErrorContains(parts ...string) func(status.ModuleStatus) bool {
	return func(m status.ModuleStatus) bool {
		return m.LastError != "" && containsAll(m.LastError, parts)
	}
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts []string) bool {
	return !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(s, p) })
}
