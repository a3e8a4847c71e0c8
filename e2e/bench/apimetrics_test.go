package bench

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The fixtures are the request metrics of a real operator over 10 modules
// after its reactions, with other families it serves around them:
// metrics.txt without a client-side rate limit, metrics-rate-limited.txt
// with --kube-client-qps=20 --kube-client-burst=10.
func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParseAPIRequests(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    APIRequests
		wantErr bool
	}{
		{"no client-side rate limit", readFixture(t, "metrics.txt"), APIRequests{
			Requests:  map[VerbCode]int{{"GET", "200"}: 226, {"GET", "404"}: 44, {"PATCH", "200"}: 10, {"POST", "201"}: 58, {"PUT", "200"}: 22},
			Converges: 1, Latency: 1255648814,
		}, false},
		{"rate-limited", readFixture(t, "metrics-rate-limited.txt"), APIRequests{
			Requests:  map[VerbCode]int{{"GET", "200"}: 229, {"GET", "404"}: 44, {"PATCH", "200"}: 10, {"POST", "201"}: 58, {"PUT", "200"}: 22},
			Converges: 1, RateLimitWait: 40154587886, Latency: 41062024411,
		}, false},
		{"request without a response", `# TYPE addon_operator_kube_requests_total counter
addon_operator_kube_requests_total{code="<error>",verb="GET"} 1
addon_operator_kube_requests_total{code="200",verb="GET"} 2
`, APIRequests{Requests: map[VerbCode]int{{"GET", "<error>"}: 1, {"GET", "200"}: 2}}, false},
		{"converges of every outcome", `# TYPE addon_operator_kube_requests_total counter
addon_operator_kube_requests_total{code="200",verb="GET"} 2
# TYPE addon_operator_converges_total counter
addon_operator_converges_total{outcome="success"} 3
addon_operator_converges_total{outcome="error"} 1
`, APIRequests{Requests: map[VerbCode]int{{"GET", "200"}: 2}, Converges: 4}, false},
		{"no request counter", "# TYPE go_goroutines gauge\ngo_goroutines 202\n", APIRequests{}, true},
		{"not the text format", "<html><body>404 page not found</body></html>\n", APIRequests{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAPIRequests(strings.NewReader(tt.text))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPIRequestsSub(t *testing.T) {
	ms := time.Millisecond
	// A ConfigMap change under a rate limit: the module's release secret is
	// read and written, its object patched; the 404 reads did not change.
	before := APIRequests{
		Requests:      map[VerbCode]int{{"GET", "200"}: 226, {"GET", "404"}: 44, {"POST", "201"}: 58, {"PUT", "200"}: 22},
		RateLimitWait: 30 * time.Second, Latency: 31 * time.Second,
	}
	after := APIRequests{
		Requests:      map[VerbCode]int{{"GET", "200"}: 238, {"GET", "404"}: 44, {"PATCH", "200"}: 2, {"POST", "201"}: 62, {"PUT", "200"}: 24},
		RateLimitWait: 30*time.Second + 667*ms, Latency: 31*time.Second + 700*ms,
	}
	want := APIRequests{
		Requests:      map[VerbCode]int{{"GET", "200"}: 12, {"PATCH", "200"}: 2, {"POST", "201"}: 4, {"PUT", "200"}: 2},
		RateLimitWait: 667 * ms, Latency: 700 * ms,
	}
	got := after.Sub(before)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after.Sub(before) (-want +got):\n%s", diff)
	}
	if got.Total() != 20 {
		t.Errorf("Total = %d, want 20", got.Total())
	}
}

func TestAPIRequestsByVerb(t *testing.T) {
	tests := []struct {
		name     string
		requests map[VerbCode]int
		want     string
	}{
		{"none", nil, ""},
		{"converge", map[VerbCode]int{{"PUT", "200"}: 22, {"GET", "404"}: 44, {"GET", "200"}: 226, {"POST", "201"}: 58, {"POST", "409"}: 1},
			"GET 270 (404: 44), POST 59 (409: 1), PUT 22"},
		{"no response", map[VerbCode]int{{"GET", "<error>"}: 1, {"GET", "200"}: 2, {"GET", "500"}: 3}, "GET 6 (500: 3, <error>: 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (APIRequests{Requests: tt.requests}).ByVerb(); got != tt.want {
				t.Errorf("ByVerb = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMetricsScraper(t *testing.T) {
	fixture := readFixture(t, "metrics-rate-limited.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(fixture))
	}))
	defer srv.Close()
	got, err := newMetricsScraper(strings.TrimPrefix(srv.URL, "http://")).scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Total() != 363 || got.RateLimitWait != 40154587886 {
		t.Errorf("scraped %d requests, rate-limit wait %v; want 363, 40.154587886s", got.Total(), got.RateLimitWait)
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	if _, err := newMetricsScraper(strings.TrimPrefix(failing.URL, "http://")).scrape(t.Context()); err == nil {
		t.Error("scrape of a 503: no error")
	}
}
