package operator

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

func TestHTTPEndpointsAndDebugCLI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"watcherEnabled": "true"})
	addr := operatortest.FreeAddress(t)
	op := h.start("--listen-address=" + addr) // the later flag wins over the harness's
	base := "http://" + addr
	h.Poll("/healthz to answer", func() bool { code, _, _ := operatortest.HTTPGet(t, base+"/healthz"); return code == http.StatusOK })
	op.WaitReady()
	if n := op.Metric("addon_operator_converges_total", nil); n < 1 {
		t.Errorf("/readyz answered 200 after %v converges, want it 503 until the first converge is done", n)
	}
	_, metrics, err := operatortest.HTTPGet(t, base+"/metrics")
	if err != nil {
		t.Errorf("GET /metrics: %v", err)
	}
	for _, want := range []string{`addon_operator_module_runs_total{module="alpha",outcome="success"}`, "addon_operator_hook_run_seconds"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, page, _ := operatortest.HTTPGet(t, base+"/"); code != http.StatusOK || !strings.Contains(page, "alpha") || !strings.Contains(page, "main") {
		t.Errorf("status page: code %d, want 200 listing module alpha and queue main", code)
	}

	// The debug CLI reaches the running operator over its unix socket.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "module", "list", "-o", "json",
		"--debug-socket", op.DebugSocket())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("module list: %v", err)
	}
	var mods []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
		Phase   string `json:"phase"`
	}
	if err := json.Unmarshal(out, &mods); err != nil {
		t.Fatalf("module list -o json: %v\n%s", err, out)
	}
	phases := map[string]string{}
	for _, m := range mods {
		if m.Enabled {
			phases[m.Name] = m.Phase
		}
	}
	if phases["alpha"] != "Ready" || phases["watcher"] != "Ready" {
		t.Errorf("enabled modules' phases = %v, want alpha and watcher Ready", phases)
	}
}
