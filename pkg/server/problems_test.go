package server

import (
	"net/http"
	"strings"
	"testing"
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
