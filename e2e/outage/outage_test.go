package outage

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// modules are the fixture's modules: two order groups of two.
func modules() map[string]string {
	return map[string]string{"ant": "010-ant", "bee": "010-bee", "cat": "020-cat", "dog": "020-dog"}
}

// fixture writes the modules, each a copy of testdata/module, enabled in
// the modules' values.yaml, and returns the modules dir, the global hooks
// dir and the hooks' state dir.
func fixture(t *testing.T) (modulesDir, globalDir, stateDir string) {
	t.Helper()
	dir := t.TempDir()
	modulesDir, globalDir, stateDir = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), filepath.Join(dir, "state")
	var enabled strings.Builder
	for name, d := range modules() {
		if err := os.CopyFS(filepath.Join(modulesDir, d), os.DirFS("testdata/module")); err != nil {
			t.Fatalf("copy module %s: %v", name, err)
		}
		enabled.WriteString(name + "Enabled: true\n")
	}
	if err := os.WriteFile(filepath.Join(modulesDir, "values.yaml"), []byte(enabled.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{globalDir, stateDir} {
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return modulesDir, globalDir, stateDir
}

// retryDelay is the operator's backoff after a module's first failure: a
// module that runs again before it did so because the outage ended.
const retryDelay = 10 * time.Minute

// maxRecovery bounds the time from the API server's return to every
// module's recovery: generous for a loaded machine, far below retryDelay.
const maxRecovery = 2 * time.Minute

// outage is a way to take the API server away and bring it back.
type outage struct {
	server string // what is stopped, for messages
	stop   func() error
	start  func(ctx context.Context) error
	// failed prefixes the request-metric series of the requests that fail
	// during the outage.
	failed string
}

// TestAPIServerRestartDuringConverge stops kube-apiserver while the first
// converge's modules run, and starts it again once every module has failed
// on the outage: clients see refused connections.
func TestAPIServerRestartDuringConverge(t *testing.T) {
	testOutageDuringConverge(t, outage{
		server: "kube-apiserver", stop: cp.StopAPIServer, start: cp.StartAPIServer,
		failed: `addon_operator_kube_requests_total{code="<error>"`,
	})
}

// TestEtcdRestartDuringConverge does the same with etcd: the API server
// answers 5xx, on which client-go's Event broadcaster gives an Event up.
func TestEtcdRestartDuringConverge(t *testing.T) {
	testOutageDuringConverge(t, outage{
		server: "etcd", stop: cp.StopEtcd, start: cp.StartEtcd,
		failed: `addon_operator_kube_requests_total{code="5`,
	})
}

func testOutageDuringConverge(t *testing.T, out outage) {
	t.Helper()
	h := operatortest.New(t, cp, bin)
	modulesDir, globalDir, state := fixture(t)
	h.SetConfig(map[string]string{})
	addr := operatortest.FreeAddress(t)
	base := "http://" + addr
	h.Start(operatortest.Options{
		ModulesDir: modulesDir, GlobalHooksDir: globalDir,
		Args: []string{"--listen-address=" + addr, "--retry-delay=" + retryDelay.String(), "--retry-max-delay=" + (2 * retryDelay).String()},
		Env:  append(os.Environ(), "OUTAGE_DIR="+state),
	})

	// The first order group runs, held in its beforeHelm hooks.
	h.Poll("the first order group's hooks to start", func() bool {
		return exists(filepath.Join(state, "ant.started")) && exists(filepath.Join(state, "bee.started"))
	})
	stopped := time.Now()
	if err := out.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// A test failing before the restart leaves the control plane whole
	// for the next one. (An error says it runs already.)
	t.Cleanup(func() { _ = out.start(context.WithoutCancel(t.Context())) })
	if err := os.WriteFile(filepath.Join(state, "open"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// Every module fails on the outage and backs off for retryDelay.
	for name := range modules() {
		h.WaitMetric(operatortest.ModuleRuns, operatortest.RunsOf(name, "error"), "to count the failure", operatortest.AtLeast(1))
	}
	waitOutageShown(t, h, base, out.failed)

	restarted := time.Now()
	if err := out.start(t.Context()); err != nil {
		t.Fatalf("start again: %v", err)
	}
	// Well before retryDelay: each module runs again at once, deploys its
	// release and says it recovered.
	for name := range modules() {
		h.WaitModule(name, "ready again", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
		if rev := h.ReleaseRevision(name); rev < 1 {
			t.Errorf("release %s: revision %d after recovery, want deployed", name, rev)
		}
	}
	took := time.Since(restarted)
	t.Logf("%d modules recovered %s after the %s started again (backoff %s)", len(modules()), took.Round(time.Millisecond), out.server, retryDelay)
	if took > maxRecovery {
		t.Errorf("modules recovered %s after the API server returned; want well under their backoff %s", took, retryDelay)
	}
	waitOutageOver(t, h, base)

	// The Event of the modules' failure, recorded during the outage, was
	// kept and arrived afterwards.
	h.Poll("the Event recorded during the outage", func() bool {
		list, err := h.Client.EventsV1().Events(h.Namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			ev := &list.Items[i]
			if ev.Reason == "ModuleRunFailed" && ev.EventTime.After(stopped) && ev.EventTime.Time.Before(restarted) {
				return true
			}
		}
		return false
	})

	// One line when the outage started, one when it ended.
	if n := h.CountLog("kubernetes api server unreachable", nil); n != 1 {
		t.Errorf("%d log lines for the outage's start, want 1", n)
	}
	if n := h.CountLog("kubernetes api server reachable again", nil); n != 1 {
		t.Errorf("%d log lines for the outage's end, want 1", n)
	}
}

// waitOutageShown waits until the operator shows an outage: /readyz, the metrics (a held Event, failed requests) and the status page.
func waitOutageShown(t *testing.T, h *operatortest.Harness, base, failed string) {
	t.Helper()
	h.Poll("/readyz to report the outage", func() bool {
		code, body, _ := operatortest.HTTPGet(t, base+"/readyz")
		return code == 503 && strings.Contains(body, "Kubernetes API server is unreachable")
	})
	h.Poll("the metrics to show the outage and a held Event", func() bool {
		m := scrape(t, base)
		return m["addon_operator_kube_api_up"] == 0 && m["addon_operator_events_pending"] >= 1 &&
			sum(m, failed) > 0
	})
	if _, page, _ := operatortest.HTTPGet(t, base+"/"); !strings.Contains(page, "Kubernetes API server is unreachable") {
		t.Errorf("the status page does not show the outage:\n%s", page)
	}

}

// waitOutageOver waits until the operator shows the outage is over: /readyz
// and the metrics.
func waitOutageOver(t *testing.T, h *operatortest.Harness, base string) {
	t.Helper()
	h.Poll("/readyz 200 after the outage", func() bool {
		code, _, _ := operatortest.HTTPGet(t, base+"/readyz")
		return code == 200
	})
	m := scrape(t, base)
	if m["addon_operator_kube_api_up"] != 1 || m["addon_operator_kube_api_outages_total"] != 1 || m["addon_operator_events_dropped_total"] != 0 {
		t.Errorf("after the outage: kube_api_up %v, outages %v, events dropped %v; want 1, 1, 0",
			m["addon_operator_kube_api_up"], m["addon_operator_kube_api_outages_total"], m["addon_operator_events_dropped_total"])
	}

}

// sum adds the values of the series whose name and labels start with prefix.
func sum(m map[string]float64, prefix string) float64 {
	total := 0.0
	for series, v := range m {
		if strings.HasPrefix(series, prefix) {
			total += v
		}
	}
	return total
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// scrape returns the operator's metrics as series (name with labels) to
// value; the test fails if /metrics does not answer.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	code, body, err := operatortest.HTTPGet(t, base+"/metrics")
	if err != nil || code != 200 {
		t.Fatalf("GET /metrics: %d, %v", code, err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
