package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRecorderGolden(t *testing.T) {
	r := NewRecorder()
	failed := errors.New("exit code 1")
	r.HookRun("cert-manager", "hooks/ca.sh", "beforeHelm", 20*time.Millisecond, nil)
	r.HookRun("cert-manager", "hooks/ca.sh", "beforeHelm", 3*time.Second, failed)
	r.HookRun("cert-manager", "hooks/ca.sh", "beforeHelm", time.Second, fmt.Errorf("run: %w", context.Canceled))
	r.HookAllowedError("", "hooks/global.sh", "every-minute")
	r.ModuleRun("cert-manager", 4*time.Second, nil)
	r.ModuleRun("ingress", 400*time.Millisecond, failed)
	r.HelmOperation("cert-manager", "upgrade", 2*time.Second)
	r.QueueLength("main", 3)
	r.QueueLength("main", 1)
	r.QueueWait("main", 100*time.Millisecond)
	r.Converge(10*time.Second, nil)
	r.Converge(time.Second, failed)
	r.ConfigError()
	r.ConfigMapPresent(false)
	r.ObjectsHealed("ingress", 2)
	r.ObjectsHealed("ingress", 0)
	kc := r.KubeClientMetrics()
	kc.RequestResult.Increment(context.Background(), "200", "GET", "10.0.0.1:6443")
	kc.RequestResult.Increment(context.Background(), "200", "GET", "10.0.0.1:6443")
	kc.RequestResult.Increment(context.Background(), "<error>", "PATCH", "10.0.0.1:6443")
	kc.RequestLatency.Observe(context.Background(), "GET", url.URL{Path: "/api/v1/namespaces"}, 3*time.Millisecond)
	kc.RateLimiterLatency.Observe(context.Background(), "GET", url.URL{Path: "/api/v1/namespaces"}, 200*time.Millisecond)
	r.KubeAPIUp(false)
	r.KubeAPIOutage()
	r.EventsPending(3)
	r.EventsDropped(2)
	r.KubeReadAnsweredLocally()
	r.ModuleObjectWrite("create")
	r.ModuleObjectWrite("status")
	r.ModuleObjectWrite("status")

	names := []string{
		"addon_operator_hook_run_seconds", "addon_operator_hook_runs_total",
		"addon_operator_hook_allowed_errors_total", "addon_operator_module_run_seconds",
		"addon_operator_module_runs_total", "addon_operator_helm_operation_seconds",
		"addon_operator_queue_length", "addon_operator_queue_wait_seconds",
		"addon_operator_converge_seconds", "addon_operator_converges_total",
		"addon_operator_config_errors_total", "addon_operator_config_map_present",
		"addon_operator_healed_objects_total",
		"addon_operator_kube_requests_total", "addon_operator_kube_request_seconds",
		"addon_operator_kube_rate_limiter_wait_seconds", "addon_operator_kube_api_up",
		"addon_operator_kube_api_outages_total", "addon_operator_events_pending",
		"addon_operator_events_dropped_total", "addon_operator_kube_reads_answered_locally_total", "addon_operator_module_object_writes_total",
	}
	compareGolden(t, r.Gatherer(), "recorder.prom", names...)

	// Every family the registry holds is either listed above or comes from
	// the Go runtime and process collectors.
	mfs, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var own int
	for _, mf := range mfs {
		name := mf.GetName()
		switch {
		case strings.HasPrefix(name, "addon_operator_"):
			own++
		case strings.HasPrefix(name, "go_"), strings.HasPrefix(name, "process_"):
		default:
			t.Errorf("unexpected metric family %q", name)
		}
	}
	if own != len(names) {
		t.Errorf("%d addon_operator_* families, want %d", own, len(names))
	}
}

// TestRecorderLint checks names, units and help texts with promlint.
func TestRecorderLint(t *testing.T) {
	r := NewRecorder()
	r.HookRun("m", "h", "b", time.Second, nil)
	r.HookAllowedError("m", "h", "b")
	r.ModuleRun("m", time.Second, nil)
	r.HelmOperation("m", "upgrade", time.Second)
	r.QueueLength("main", 1)
	r.QueueWait("main", time.Second)
	r.Converge(time.Second, nil)
	r.ConfigError()
	r.ObjectsHealed("m", 1)
	r.KubeClientMetrics().RequestResult.Increment(context.Background(), "200", "GET", "h")
	r.KubeClientMetrics().RequestLatency.Observe(context.Background(), "GET", url.URL{}, time.Millisecond)
	r.KubeClientMetrics().RateLimiterLatency.Observe(context.Background(), "GET", url.URL{}, time.Millisecond)
	problems, err := testutil.GatherAndLint(r.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "addon_operator_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}
