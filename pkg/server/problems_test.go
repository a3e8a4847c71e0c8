package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/status"
)

type fixedProblem string

func (p fixedProblem) Problem() string { return string(p) }

func TestProblemsMakeReadyzFailAndShowOnStatusPage(t *testing.T) {
	const outage = "the Kubernetes API server is unreachable since 2026-01-02T03:04:05Z: connection refused"
	tests := []struct {
		name     string
		problems []Problem
		ready    bool
		wantCode int
		wantBody string
	}{
		{name: "none", problems: []Problem{fixedProblem("")}, ready: true, wantCode: http.StatusOK, wantBody: "ok\n"},
		{name: "outage after the converge", problems: []Problem{fixedProblem(outage)}, ready: true,
			wantCode: http.StatusServiceUnavailable, wantBody: outage + "\n"},
		{name: "outage before the converge", problems: []Problem{fixedProblem(""), fixedProblem(outage)},
			wantCode: http.StatusServiceUnavailable, wantBody: outage + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFakeSource()
			src.ready = tt.ready
			opts := DefaultOptions()
			opts.Problems = tt.problems
			h := New(opts, src, discard()).Handler()
			rec := get(t, h, http.MethodGet, "/readyz")
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("/readyz = %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
			page := get(t, h, http.MethodGet, "/").Body.String()
			shown := strings.Contains(page, `<p class="problem error">`+outage+`</p>`)
			if want := tt.wantCode != http.StatusOK; shown != want {
				t.Errorf("status page shows the outage: %v, want %v", shown, want)
			}
		})
	}
}

// TestWarningsRoute serves what /readyz names besides "ok" to the debug
// CLI: problems first, then conditions with their releases.
func TestWarningsRoute(t *testing.T) {
	const outage = "the Kubernetes API server is unreachable since 2026-01-02T03:04:05Z: connection refused"
	src := newFakeSource()
	src.conds = []status.Condition{
		{Type: status.ConditionConfigMapInvalid, Message: "the ConfigMap was rejected"},
		{Type: status.ConditionForeignReleases, Message: "releases left in place", Releases: []string{"a", "b"}},
	}
	opts := DefaultOptions()
	opts.Problems = []Problem{fixedProblem(outage), fixedProblem("")}
	s := New(opts, src, discard())
	ts := httptest.NewServer(s.DebugHandler())
	t.Cleanup(ts.Close)
	c, err := NewHTTPClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Warnings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{outage, "ConfigMapInvalid: the ConfigMap was rejected", "ForeignReleases: releases left in place (releases: a, b)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
