package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// batch is one hook run's METRICS_PATH content.
type batch struct {
	src   Source
	lines string
}

// applyAll parses and applies batches in order, failing the test on error.
func applyAll(t *testing.T, h *HookMetrics, batches ...batch) {
	t.Helper()
	for i, b := range batches {
		ms, err := ParseHookMetrics([]byte(b.lines))
		if err != nil {
			t.Fatalf("batch %d: ParseHookMetrics: %v", i, err)
		}
		if err := h.Apply(b.src, ms); err != nil {
			t.Fatalf("batch %d: Apply: %v", i, err)
		}
	}
}

// hookCase is a sequence of batches and, in testdata/hook-<name>.prom, the
// exposition they leave.
type hookCase struct {
	name    string
	batches []batch
}

func TestHookMetricsActions(t *testing.T) {
	hook1 := Source{Module: "cert-manager", Hook: "hooks/ca.sh"}
	hook2 := Source{Module: "ingress", Hook: "hooks/count.py"}
	global := Source{Hook: "hooks/global.sh"}
	runHookCases(t, []hookCase{
		{
			name: "add",
			batches: []batch{
				{hook1, `{"name":"objects","action":"add","value":1,"labels":{"kind":"pod"}}
{"name":"objects","add":2,"labels":{"kind":"pod"}}
{"name":"objects","action":"add","value":1,"labels":{"kind":"secret"}}`},
				{hook1, `{"name":"objects","action":"add","value":0.5,"labels":{"kind":"pod"}}`},
				{hook2, `{"name":"objects","action":"add","value":1,"labels":{"kind":"pod"}}`},
			},
		},
		{
			name: "set",
			batches: []batch{
				{hook1, `{"name":"temperature","action":"set","value":10,"labels":{"room":"a"}}
{"name":"temperature","set":-3.5,"labels":{"room":"b"}}`},
				{hook1, `{"name":"temperature","action":"set","value":12,"labels":{"room":"a"}}`},
			},
		},
		{
			name: "observe",
			batches: []batch{
				{hook1, `{"name":"latency","action":"observe","value":0.5,"buckets":[1,5]}
{"name":"latency","action":"observe","value":3,"buckets":[1,5]}
{"name":"latency","action":"observe","value":7}
{"name":"size","action":"observe","value":0.2}`},
				// Later buckets are ignored: the first observe set them.
				{hook1, `{"name":"latency","action":"observe","value":1,"buckets":[2,3,4]}`},
			},
		},
		{
			// The hook's own "hook" label is overridden; a global hook gets
			// an empty module.
			name: "label merging",
			batches: []batch{
				{hook1, `{"name":"m","set":1,"labels":{"hook":"spoofed","zone":"a"}}`},
				{global, `{"name":"m","set":2,"labels":{"zone":"a"}}`},
			},
		},
	})
}

func TestHookMetricsGroups(t *testing.T) {
	hook1 := Source{Module: "cert-manager", Hook: "hooks/ca.sh"}
	hook2 := Source{Module: "ingress", Hook: "hooks/count.py"}
	runHookCases(t, []hookCase{
		{
			name: "group replaced by the next batch",
			batches: []batch{
				{hook1, `{"group":"g","name":"objects","add":1,"labels":{"kind":"pod"}}
{"group":"g","name":"objects","add":1,"labels":{"kind":"replicaset"}}
{"group":"g","name":"special","set":12}
{"group":"g","name":"common","set":300,"labels":{"source":"s3"}}
{"name":"common","set":100,"labels":{"source":"s1"}}`},
				{hook2, `{"group":"g2","name":"objects","add":1,"labels":{"kind":"secret"}}`},
				// Only the pod series stays in g, restarted from this batch.
				{hook1, `{"group":"g","name":"objects","add":1,"labels":{"kind":"pod"}}`},
			},
		},
		{
			name: "expire",
			batches: []batch{
				{hook1, `{"group":"g1","name":"a","set":1,"labels":{"x":"1"}}
{"group":"g2","name":"b","set":2}
{"group":"g2","name":"a","set":3,"labels":{"x":"2"}}`},
				{hook2, `{"group":"g1","name":"a","set":4,"labels":{"x":"1"}}`},
				// Groups are global: hook2 expires what hook1 put in g2.
				{hook2, `{"group":"g2","action":"expire"}`},
				// An expire also drops what the batch added before it.
				{hook1, `{"group":"g3","name":"c","set":5}
{"group":"g3","action":"expire"}
{"name":"d","set":6}`},
			},
		},
		{
			// A series belongs to the group of the metric that wrote it last.
			name: "series changes group",
			batches: []batch{
				{hook1, `{"name":"m","set":1,"labels":{"s":"moved"}}
{"name":"m","set":1,"labels":{"s":"kept"}}`},
				{hook1, `{"group":"g","name":"m","set":2,"labels":{"s":"moved"}}`},
				{hook1, `{"group":"g","action":"expire"}`},
			},
		},
		{
			// Once a name has no series, it may come back with another kind.
			name: "expired name reused",
			batches: []batch{
				{hook1, `{"group":"g","name":"m","set":1}`},
				{hook1, `{"group":"g","action":"expire"}`},
				{hook1, `{"name":"m","add":2}`},
			},
		},
	})
}

func runHookCases(t *testing.T, tests []hookCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHookMetrics()
			applyAll(t, h, tt.batches...)
			compareGolden(t, h.Gatherer(), "hook-"+strings.ReplaceAll(tt.name, " ", "-")+".prom")
		})
	}
}

func TestHookMetricsApplyErrors(t *testing.T) {
	src := Source{Module: "m", Hook: "hooks/h.sh"}
	before := `{"name":"c","add":1,"labels":{"kind":"pod"}}
{"name":"h","action":"observe","value":1}
{"group":"g","name":"g","set":1}`
	tests := []struct {
		name     string
		metrics  []HookMetric
		wantErr  string
		conflict bool
	}{
		{
			name:     "another kind",
			metrics:  []HookMetric{{Name: "c", Action: ActionSet, Value: 1, Labels: map[string]string{"kind": "pod"}}},
			wantErr:  `metric 0: "c": action "set" would make a gauge, but it is a counter: metric conflict`,
			conflict: true,
		},
		{
			name:     "another label set",
			metrics:  []HookMetric{{Name: "c", Action: ActionAdd, Value: 1}},
			wantErr:  `metric 0: "c": labels ["hook" "module"] differ from its label names ["hook" "kind" "module"]: metric conflict`,
			conflict: true,
		},
		{
			name:     "a histogram's series name",
			metrics:  []HookMetric{{Name: "h_count", Action: ActionSet, Value: 1}},
			wantErr:  `metric 0: "h_count" clashes with the series of histogram "h": metric conflict`,
			conflict: true,
		},
		{
			name:     "histogram over an existing name",
			metrics:  []HookMetric{{Name: "c_total", Action: ActionSet, Value: 1}, {Name: "c", Action: ActionObserve, Value: 1}},
			wantErr:  `metric 1: "c": action "observe" would make a histogram, but it is a counter: metric conflict`,
			conflict: true,
		},
		{
			name: "conflict inside the batch, nothing applied",
			metrics: []HookMetric{
				{Name: "c", Action: ActionAdd, Value: 5, Labels: map[string]string{"kind": "pod"}},
				{Group: "g", Action: ActionExpire},
				{Name: "n", Action: ActionSet, Value: 1},
				{Name: "n", Action: ActionAdd, Value: 1},
			},
			wantErr:  `metric 3: "n": action "add" would make a counter, but it is a gauge: metric conflict`,
			conflict: true,
		},
		{
			name:    "invalid metric",
			metrics: []HookMetric{{Name: "c", Action: ActionAdd, Value: -1}},
			wantErr: `metric 0: field "value": a counter only grows: want a finite number >= 0, got -1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHookMetrics()
			applyAll(t, h, batch{src, before})
			err := h.Apply(src, tt.metrics)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Apply error:\n got %v\nwant %s", err, tt.wantErr)
			}
			if got := errors.Is(err, ErrConflict); got != tt.conflict {
				t.Errorf("errors.Is(err, ErrConflict) = %v, want %v", got, tt.conflict)
			}
			// The failed batch changed nothing.
			compareGolden(t, h.Gatherer(), "hook-apply-error.prom")
		})
	}
}

func TestHookMetricsHandler(t *testing.T) {
	h := NewHookMetrics()
	applyAll(t, h, batch{Source{Module: "m", Hook: "h"}, `{"name":"served","set":42}`})
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := `served{hook="h",module="m"} 42`; resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("GET = %d %q, want 200 with %q", resp.StatusCode, body, want)
	}
}

// TestHookMetricsConcurrent lets the race detector check that batches and
// scrapes may overlap.
func TestHookMetricsConcurrent(t *testing.T) {
	h := NewHookMetrics()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			src := Source{Module: "m", Hook: fmt.Sprintf("hooks/%d.sh", i)}
			for range 50 {
				if err := h.Apply(src, []HookMetric{
					{Name: "c", Action: ActionAdd, Value: 1},
					{Group: src.Hook, Name: "g", Action: ActionSet, Value: 1},
				}); err != nil {
					t.Error(err)
					return
				}
				if _, err := h.Gatherer().Gather(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	mfs, err := h.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series, total float64
	for _, mf := range mfs {
		if mf.GetName() != "c" {
			continue
		}
		for _, m := range mf.GetMetric() {
			series++
			total += m.GetCounter().GetValue()
		}
	}
	if series != 4 || total != 4*50 {
		t.Errorf("c has %v series adding up to %v, want 4 series adding up to 200", series, total)
	}
}
