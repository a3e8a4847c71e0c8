package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestLocalAnswersLeaveRequests checks that a read answered locally, which
// client-go still reports as a GET 404, is not counted as a request.
func TestLocalAnswersLeaveRequests(t *testing.T) {
	r := NewRecorder()
	result := r.KubeClientMetrics().RequestResult
	r.KubeReadAnsweredLocally()
	r.KubeReadAnsweredLocally()
	for _, c := range []struct{ method, code string }{
		{"GET", "200"}, {"GET", "404"}, {"POST", "404"}, {"GET", "404"}, {"GET", "404"},
	} {
		result.Increment(t.Context(), c.code, c.method, "")
	}
	want := `
# HELP addon_operator_kube_requests_total Requests to the Kubernetes API server by HTTP verb and status code ("<error>" when no response came).
# TYPE addon_operator_kube_requests_total counter
addon_operator_kube_requests_total{code="200",verb="GET"} 1
addon_operator_kube_requests_total{code="404",verb="GET"} 1
addon_operator_kube_requests_total{code="404",verb="POST"} 1
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "addon_operator_kube_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestRepeatedReadsLeaveRequests checks that a read answered locally as
// an earlier one was, which client-go reports as a GET 200, is not
// counted as a request, and that both kinds of local answers are counted.
func TestRepeatedReadsLeaveRequests(t *testing.T) {
	r := NewRecorder()
	result := r.KubeClientMetrics().RequestResult
	r.KubeReadRepeatedLocally()
	r.KubeReadAnsweredLocally()
	for _, c := range []struct{ method, code string }{
		{"PATCH", "200"}, {"GET", "200"}, {"GET", "200"}, {"GET", "404"}, {"GET", "404"},
	} {
		result.Increment(t.Context(), c.code, c.method, "")
	}
	want := `
# HELP addon_operator_kube_requests_total Requests to the Kubernetes API server by HTTP verb and status code ("<error>" when no response came).
# TYPE addon_operator_kube_requests_total counter
addon_operator_kube_requests_total{code="200",verb="GET"} 1
addon_operator_kube_requests_total{code="200",verb="PATCH"} 1
addon_operator_kube_requests_total{code="404",verb="GET"} 1
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "addon_operator_kube_requests_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(r.kubeClient.localAnswers); got != 2 {
		t.Errorf("reads answered locally = %v, want 2", got)
	}
}
