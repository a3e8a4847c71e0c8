package operator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// Module keeper (900-keeper) has no hooks: a chart with one Secret whose
// token comes from its values, and that fails to render when its values
// say broken. It is enabled only through the ConfigMap.

// startHTTP starts the operator on an HTTP address of its own, waits for
// /readyz and returns the base URL.
func (h *harness) startHTTP(args ...string) string {
	h.T.Helper()
	addr := operatortest.FreeAddress(h.T)
	h.start(append(args, "--listen-address="+addr)...)
	base := "http://" + addr
	h.Poll("/readyz to answer 200", func() bool {
		code, _, _ := operatortest.HTTPGet(h.T, base+"/readyz")
		return code == http.StatusOK
	})
	return base
}

// get returns the body of a GET that must answer 200.
func (h *harness) get(url string) string {
	h.T.Helper()
	code, body, err := operatortest.HTTPGet(h.T, url)
	if err != nil || code != http.StatusOK {
		h.T.Fatalf("GET %s: %d, %v", url, code, err)
	}
	return body
}

// metricLine reports whether /metrics has exactly this sample line.
func (h *harness) metricLine(base, line string) bool {
	h.T.Helper()
	for l := range strings.SplitSeq(h.get(base+"/metrics"), "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// keeperToken returns the token of the keeper Secret, "" when it does not
// exist.
func (h *harness) keeperToken() string {
	h.T.Helper()
	s, err := h.Client.CoreV1().Secrets(h.Namespace).Get(h.T.Context(), "keeper", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		h.T.Fatalf("get Secret keeper: %v", err)
	}
	return string(s.Data["token"])
}

// hasEvent reports whether an Event with reason regards the ConfigMap and
// its note contains note.
func (h *harness) hasEvent(reason, note string) bool {
	h.T.Helper()
	list, err := h.Client.EventsV1().Events(h.Namespace).List(h.T.Context(), metav1.ListOptions{})
	if err != nil {
		h.T.Fatalf("list events: %v", err)
	}
	for i := range list.Items {
		e := &list.Items[i]
		if e.Reason == reason && e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == "addon-operator" && strings.Contains(e.Note, note) {
			return true
		}
	}
	return false
}

func (h *harness) deleteConfig() {
	h.T.Helper()
	if err := h.Client.CoreV1().ConfigMaps(h.Namespace).Delete(h.T.Context(), "addon-operator", metav1.DeleteOptions{}); err != nil {
		h.T.Fatalf("delete ConfigMap: %v", err)
	}
}

func TestDeletedConfigMapKeepsTheLastConfiguration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "token: first"})
	base := h.startHTTP()
	if got := h.keeperToken(); got != "first" {
		t.Fatalf("keeper token = %q, want first", got)
	}

	h.deleteConfig()
	h.Poll("the deletion on /metrics", func() bool { return h.metricLine(base, "addon_operator_config_map_present 0") })
	h.Poll("the ConfigMapDeleted Event", func() bool { return h.hasEvent("ConfigMapDeleted", "last valid configuration stays in force") })
	code, body, _ := operatortest.HTTPGet(t, base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "warning: ConfigMapMissing:") {
		t.Errorf("/readyz = %d %q, want 200 naming ConfigMapMissing", code, body)
	}
	// Nothing was queued: the main queue is idle and keeper still enabled
	// and ready, its release and Secret as they were.
	page := h.get(base + "/")
	for _, want := range []string{
		`id="condition-ConfigMapMissing"`,
		`<tr class="queue-main"><td>main</td><td>idle</td><td colspan="4">no tasks</td></tr>`,
		`<tr id="module-keeper"><td><a href="/modules/keeper">keeper</a></td><td>true</td><td>configmap</td><td class="Ready">Ready</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %s:\n%s", want, page)
		}
	}
	if got := h.ReleaseRevision("keeper"); got != 1 {
		t.Errorf("keeper release revision = %d, want 1", got)
	}
	if got := h.keeperToken(); got != "first" {
		t.Errorf("keeper token after the deletion = %q, want first", got)
	}

	// Recreated: its content applies as any change does.
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "token: second"})
	h.Poll("the new token", func() bool { return h.keeperToken() == "second" })
	h.Poll("the ConfigMapRecreated Event", func() bool { return h.hasEvent("ConfigMapRecreated", "recreated") })
	if !h.metricLine(base, "addon_operator_config_map_present 1") {
		t.Error("/metrics does not say the ConfigMap is present again")
	}
	if page := h.get(base + "/"); strings.Contains(page, "condition-ConfigMapMissing") {
		t.Error("the status page still shows the ConfigMap missing")
	}
	if body := h.get(base + "/readyz"); body != "ok\n" {
		t.Errorf("/readyz body = %q, want ok alone", body)
	}
}

func TestDeletedConfigMapMeansEmptyWithTheFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "token: first"})
	base := h.startHTTP("--config-map-deleted=empty")
	if got := h.ReleaseRevision("keeper"); got != 1 {
		t.Fatalf("keeper release revision = %d, want 1", got)
	}
	h.deleteConfig()
	h.Poll("keeper's release to be uninstalled", func() bool { return h.ReleaseRevision("keeper") == 0 })
	h.Poll("keeper's Secret to be deleted", func() bool { return h.keeperToken() == "" })
	if !strings.Contains(h.get(base+"/"), `id="condition-ConfigMapMissing"`) {
		t.Error("the status page does not show the ConfigMap missing")
	}
	if got := h.ReleaseRevision("alpha"); got != 1 {
		t.Errorf("alpha release revision = %d, want 1: enabled by modules/values.yaml, not by the ConfigMap", got)
	}
}

func TestMalformedConfigMapIsReportedAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "token: first"})
	base := h.startHTTP()
	if !h.metricLine(base, "addon_operator_config_errors_total 0") {
		t.Fatal("config errors counted before any bad ConfigMap")
	}

	h.SetConfig(map[string]string{"keeperEnabled": "yes", "keeper": "token: [unclosed"})
	h.Poll("the rejection on /metrics", func() bool { return h.metricLine(base, "addon_operator_config_errors_total 1") })
	page := h.get(base + "/")
	for _, want := range []string{`id="condition-ConfigMapInvalid"`, "<code>keeper</code>", "<code>keeperEnabled</code>", "want &#34;true&#34; or &#34;false&#34;"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %s", want)
		}
	}
	h.Poll("the ConfigRejected Event naming the keys", func() bool { return h.hasEvent("ConfigRejected", "keys keeper, keeperEnabled rejected") })
	if body := h.get(base + "/readyz"); !strings.Contains(body, "warning: ConfigMapInvalid:") {
		t.Errorf("/readyz body = %q, want it to name ConfigMapInvalid", body)
	}
	if got := h.ReleaseRevision("keeper"); got != 1 {
		t.Errorf("keeper release revision = %d, want 1", got)
	}

	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "token: fixed"})
	h.Poll("the fixed token", func() bool { return h.keeperToken() == "fixed" })
	h.Poll("the condition to clear", func() bool { return !strings.Contains(h.get(base+"/"), "condition-ConfigMapInvalid") })
	if !h.metricLine(base, "addon_operator_config_errors_total 1") {
		t.Error("a valid ConfigMap counted as an error")
	}
}

func TestFailingModuleFixedInTheConfigMapRunsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "broken: true"})
	// A backoff far longer than any wait of this test.
	base := h.startHTTP("--retry-delay=30m", "--retry-max-delay=30m")
	h.Poll("keeper's failed run on /metrics", func() bool {
		return h.metricLine(base, `addon_operator_module_runs_total{module="keeper",outcome="error"} 1`)
	})
	if !strings.Contains(h.get(base+"/"), `<td class="Failed">Failed</td><td>`+h.Namespace+`</td><td></td><td></td><td class="error">module keeper: helm:`) {
		t.Error("the status page does not show keeper failed by its chart")
	}

	fixed := time.Now()
	h.SetConfig(map[string]string{"keeperEnabled": "true", "keeper": "broken: false\ntoken: ok"})
	h.Poll("the fixed module's Secret", func() bool { return h.keeperToken() == "ok" })
	t.Logf("keeper ran %s after its section was fixed, with a 30m backoff pending", time.Since(fixed).Round(time.Millisecond))
	// The run is counted when it ends, after its release is applied.
	h.Poll("keeper's successful run on /metrics", func() bool {
		return h.metricLine(base, `addon_operator_module_runs_total{module="keeper",outcome="success"} 1`)
	})
}

func TestHookConfigPatchDoesNotRecreateADeletedConfigMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// scribe (900-scribe) writes a new value to its section every second.
	h.SetConfig(map[string]string{"scribeEnabled": "true", "keeperEnabled": "true", "keeper": "token: first"})
	base := h.startHTTP()
	h.Poll("scribe's first write", func() bool { return h.ConfigMapData("addon-operator")["scribe"] != "" })

	h.deleteConfig()
	h.Poll("the deletion on /metrics", func() bool { return h.metricLine(base, "addon_operator_config_map_present 0") })
	ticks := func() int { return strings.Count(strings.Join(h.readTrace(), "\n"), "scribe:tick") }
	mark := ticks()
	h.Poll("two more scribe runs", func() bool { return ticks() >= mark+2 })
	if data := h.ConfigMapData("addon-operator"); data != nil {
		t.Errorf("the ConfigMap was recreated by the hook's config patch: %v", data)
	}
	if got := h.ReleaseRevision("keeper"); got != 1 {
		t.Errorf("keeper release revision = %d, want 1", got)
	}
	if n := h.CountLog("config patch kept in memory only: the ConfigMap was deleted", map[string]string{"module": "scribe", "level": "WARN"}); n != 1 {
		t.Errorf("warnings about kept config patches = %d, want 1", n)
	}
}
