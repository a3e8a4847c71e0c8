package operator

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHTTPEndpointsAndDebugCLI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setConfig(map[string]string{"watcherEnabled": "true"})
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	h.start("--listen-address=" + addr) // the later flag wins over the harness's
	base := "http://" + addr
	h.poll("/healthz to answer", func() bool { code, _ := get(t, base+"/healthz"); return code == http.StatusOK })
	h.waitLog(1, "first converge done", nil)
	if code, _ := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the first converge = %d, want 200", code)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`addon_operator_module_runs_total{module="alpha",outcome="success"}`, "addon_operator_hook_run_seconds"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, page := get(t, base+"/"); code != http.StatusOK || !strings.Contains(page, "alpha") || !strings.Contains(page, "main") {
		t.Errorf("status page: code %d, want 200 listing module alpha and queue main", code)
	}

	// The debug CLI reaches the running operator over its unix socket.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "module", "list", "-o", "json",
		"--debug-socket", filepath.Join(h.dir, "debug.socket"))
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
