package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The operator's metrics of its requests to the API server, as client-go
// records them for every client in the process.
const (
	metricRequests      = "addon_operator_kube_requests_total"
	metricRateLimitWait = "addon_operator_kube_rate_limiter_wait_seconds"
	metricLatency       = "addon_operator_kube_request_seconds"
	metricConverges     = "addon_operator_converges_total"
)

// scrapeTimeout bounds one read of the operator's /metrics.
const scrapeTimeout = 10 * time.Second

// VerbCode is a request's HTTP verb and status code; the code is
// "<error>" when no response came.
type VerbCode struct{ Verb, Code string }

// APIRequests are the operator's requests to the API server as its
// /metrics count them: totals since it started, or the difference of two
// scrapes (Sub).
type APIRequests struct {
	// Requests counts the requests by verb and status code.
	Requests map[VerbCode]int
	// Converges counts the operator's finished converges, any outcome.
	Converges int
	// RateLimitWait is the time requests waited for the client-side rate
	// limiter (--kube-client-qps), summed over requests; zero without one.
	RateLimitWait time.Duration
	// Latency is the requests' time until the response headers, summed;
	// client-go measures it from before the rate limiter, so it includes
	// RateLimitWait, and leaves watches out.
	Latency time.Duration
}

// Total is the number of requests.
func (a APIRequests) Total() int {
	n := 0
	for _, c := range a.Requests {
		n += c
	}
	return n
}

// Sub returns what happened between an earlier scrape and a.
func (a APIRequests) Sub(earlier APIRequests) APIRequests {
	d := APIRequests{
		Requests:      make(map[VerbCode]int, len(a.Requests)),
		Converges:     a.Converges - earlier.Converges,
		RateLimitWait: a.RateLimitWait - earlier.RateLimitWait,
		Latency:       a.Latency - earlier.Latency,
	}
	for k, n := range a.Requests {
		if n -= earlier.Requests[k]; n != 0 {
			d.Requests[k] = n
		}
	}
	return d
}

// ByVerb is "GET 210 (404: 10), LIST 12": the requests per verb, sorted
// by verb, with the count of each status code outside 2xx.
func (a APIRequests) ByVerb() string {
	perVerb := map[string]int{}
	odd := map[string][]string{}
	for _, k := range slices.SortedFunc(maps.Keys(a.Requests), compareVerbCode) {
		perVerb[k.Verb] += a.Requests[k]
		if !strings.HasPrefix(k.Code, "2") {
			odd[k.Verb] = append(odd[k.Verb], fmt.Sprintf("%s: %d", k.Code, a.Requests[k]))
		}
	}
	parts := make([]string, 0, len(perVerb))
	for _, verb := range slices.Sorted(maps.Keys(perVerb)) {
		s := fmt.Sprintf("%s %d", verb, perVerb[verb])
		if len(odd[verb]) > 0 {
			s += " (" + strings.Join(odd[verb], ", ") + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func compareVerbCode(x, y VerbCode) int {
	if c := strings.Compare(x.Verb, y.Verb); c != 0 {
		return c
	}
	return strings.Compare(x.Code, y.Code)
}

// parseAPIRequests reads the request metrics from a /metrics response in
// the Prometheus text format. The request counter must be there: every
// operator makes requests before it serves /metrics. The histograms have
// no series until something is observed (the rate limiter's none without
// a client-side limit), and count as zero then.
func parseAPIRequests(r io.Reader) (APIRequests, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return APIRequests{}, fmt.Errorf("parse metrics: %w", err)
	}
	requests, ok := families[metricRequests]
	if !ok {
		return APIRequests{}, fmt.Errorf("parse metrics: no %s", metricRequests)
	}
	a := APIRequests{Requests: map[VerbCode]int{}}
	for _, m := range requests.GetMetric() {
		var k VerbCode
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				k.Verb = l.GetValue()
			case "code":
				k.Code = l.GetValue()
			}
		}
		a.Requests[k] += int(math.Round(m.GetCounter().GetValue()))
	}
	for _, m := range families[metricConverges].GetMetric() {
		a.Converges += int(math.Round(m.GetCounter().GetValue()))
	}
	for _, m := range families[metricRateLimitWait].GetMetric() {
		a.RateLimitWait += seconds(m.GetHistogram().GetSampleSum())
	}
	for _, m := range families[metricLatency].GetMetric() {
		a.Latency += seconds(m.GetHistogram().GetSampleSum())
	}
	return a, nil
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// metricsScraper reads the request metrics from an operator's /metrics.
type metricsScraper struct {
	client *http.Client
	url    string
}

// newMetricsScraper scrapes the HTTP listener at addr (host:port).
func newMetricsScraper(addr string) *metricsScraper {
	return &metricsScraper{client: &http.Client{Timeout: scrapeTimeout}, url: "http://" + addr + "/metrics"}
}

// scrape returns the request metrics now.
func (m *metricsScraper) scrape(ctx context.Context) (APIRequests, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, http.NoBody)
	if err != nil {
		return APIRequests{}, fmt.Errorf("scrape %s: %w", m.url, err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := m.client.Do(req)
	if err != nil {
		return APIRequests{}, fmt.Errorf("scrape %s: %w", m.url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return APIRequests{}, fmt.Errorf("scrape %s: status %d", m.url, resp.StatusCode)
	}
	a, err := parseAPIRequests(resp.Body)
	if err != nil {
		return APIRequests{}, fmt.Errorf("scrape %s: %w", m.url, err)
	}
	return a, nil
}
