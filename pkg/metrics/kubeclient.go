package metrics

import (
	"context"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// requestBuckets span a cached read on loopback (1 ms) to a slow write
// behind admission webhooks (30 s).
func requestBuckets() []float64 {
	return []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
}

// kubeClientMetrics are the metrics of the requests the operator sends to
// the Kubernetes API server.
type kubeClientMetrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited *prometheus.HistogramVec
	apiUp       prometheus.Gauge
	outages     prometheus.Counter
	eventsHeld  prometheus.Gauge
	eventsLost  prometheus.Counter
	// localAnswers counts reads answered without a request (see
	// KubeReadAnsweredLocally, KubeReadRepeatedLocally); unsent and
	// unsentOK hold those not yet taken out of requests.
	localAnswers prometheus.Counter
	unsent       *atomic.Int64
	unsentOK     *atomic.Int64
}

func newKubeClientMetrics() kubeClientMetrics {
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "addon_operator_" + name, Help: help, Buckets: requestBuckets(),
		}, []string{"verb"})
	}
	return kubeClientMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addon_operator_kube_requests_total",
			Help: "Requests to the Kubernetes API server by HTTP verb and status code (\"<error>\" when no response came).",
		}, []string{"verb", "code"}),
		latency: histogram("kube_request_seconds", "Latency of requests to the Kubernetes API server, until the response headers."),
		rateLimited: histogram("kube_rate_limiter_wait_seconds",
			"Time requests waited for the operator's client-side rate limit (--kube-client-qps, --kube-client-burst) before they were sent."),
		apiUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addon_operator_kube_api_up",
			Help: "1 while the Kubernetes API server answers, 0 during an outage (no answer, or /readyz failing, as when etcd is down).",
		}),
		outages: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "addon_operator_kube_api_outages_total", Help: "Outages of the Kubernetes API server seen.",
		}),
		eventsHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "addon_operator_events_pending",
			Help: "Kubernetes Events recorded while the API server could not take them, held to be sent when it can.",
		}),
		eventsLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "addon_operator_events_dropped_total",
			Help: "Kubernetes Events dropped, oldest first, because more were held during an outage than the buffer keeps.",
		}),
		localAnswers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "addon_operator_kube_reads_answered_locally_total",
			Help: "Reads answered without a request: of objects known to be absent, answered NotFound (Helm's existence checks after the operator's own), " +
				"and Helm's repeated reads of an object within one install or upgrade, answered as the first; not in addon_operator_kube_requests_total.",
		}),
		unsent:   &atomic.Int64{},
		unsentOK: &atomic.Int64{},
	}
}

func (m kubeClientMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.latency, m.rateLimited, m.apiUp, m.outages, m.eventsHeld, m.eventsLost, m.localAnswers}
}

// KubeAPIUp sets whether the Kubernetes API server answers.
func (r *Recorder) KubeAPIUp(up bool) {
	v := 0.0
	if up {
		v = 1
	}
	r.kubeClient.apiUp.Set(v)
}

// KubeAPIOutage records the start of an outage of the API server.
func (r *Recorder) KubeAPIOutage() { r.kubeClient.outages.Inc() }

// EventsPending sets how many Events wait for the API server.
func (r *Recorder) EventsPending(n int) { r.kubeClient.eventsHeld.Set(float64(n)) }

// EventsDropped records n Events dropped from a full buffer.
func (r *Recorder) EventsDropped(n int) { r.kubeClient.eventsLost.Add(float64(n)) }

// KubeReadAnsweredLocally records a GET answered NotFound in-process,
// without a request: client-go counts it as a GET with code 404 all the
// same, so the next such count is left out of the requests metric, which
// keeps counting only what reached the API server.
func (r *Recorder) KubeReadAnsweredLocally() {
	r.kubeClient.localAnswers.Inc()
	r.kubeClient.unsent.Add(1)
}

// KubeReadRepeatedLocally records a GET answered in-process as an earlier
// one of the same object was (200), without a request; like
// KubeReadAnsweredLocally, the next GET 200 is left out of the requests
// metric.
func (r *Recorder) KubeReadRepeatedLocally() {
	r.kubeClient.localAnswers.Inc()
	r.kubeClient.unsentOK.Add(1)
}

// KubeClientMetrics returns what client-go needs to record the requests of
// every client in the process on r: pass it to
// k8s.io/client-go/tools/metrics.Register, which takes the first
// registration of a process only.
func (r *Recorder) KubeClientMetrics() clientmetrics.RegisterOpts {
	return clientmetrics.RegisterOpts{
		RequestResult:      requestResult{counter: r.kubeClient.requests, unsent: r.kubeClient.unsent, unsentOK: r.kubeClient.unsentOK},
		RequestLatency:     verbLatency{r.kubeClient.latency},
		RateLimiterLatency: verbLatency{r.kubeClient.rateLimited},
	}
}

type requestResult struct {
	counter  *prometheus.CounterVec
	unsent   *atomic.Int64 // GET 404s answered locally
	unsentOK *atomic.Int64 // GET 200s answered locally
}

// Increment counts a request, unless it is a GET 404 or 200 that stands
// for a read answered locally: which of the GETs with that code is left
// out does not matter, the counts are the same.
func (m requestResult) Increment(_ context.Context, code, method, _ string) {
	if method == "GET" && (code == "404" && takeOne(m.unsent) || code == "200" && takeOne(m.unsentOK)) {
		return
	}
	m.counter.WithLabelValues(method, code).Inc()
}

// takeOne decrements n if it is positive, and reports whether it did.
func takeOne(n *atomic.Int64) bool {
	if n == nil {
		return false
	}
	for v := n.Load(); v > 0; v = n.Load() {
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
	return false
}

type verbLatency struct{ histogram *prometheus.HistogramVec }

func (m verbLatency) Observe(_ context.Context, verb string, _ url.URL, latency time.Duration) {
	m.histogram.WithLabelValues(verb).Observe(latency.Seconds())
}
