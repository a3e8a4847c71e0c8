package webhook

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// countedHook appends its parent's pid (the operator that started it) to
// __RUNS__ for every --config run.
const countedHook = `#!/bin/sh
if [ "$1" = --config ]; then
  echo "$PPID" >>__RUNS__
  echo '{"configVersion":"v1","beforeHelm":1}'
  exit 0
fi
`

// TestStandbyTakingOverDoesNotRerunConfig: a standby loads every hook to
// serve their webhooks; once it leads, the unchanged hook files are not
// run with --config a second time. Each replica runs the hook's --config
// once.
func TestStandbyTakingOverDoesNotRerunConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	runs := filepath.Join(t.TempDir(), "runs")
	hookPath := filepath.Join(h.dir, "modules", "040-counted", "hooks", "counted")
	if err := os.MkdirAll(filepath.Dir(hookPath), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookPath, []byte(strings.ReplaceAll(countedHook, "__RUNS__", runs)), 0o755); err != nil { //nolint:gosec // G306: a hook must be executable
		t.Fatal(err)
	}
	h.SetConfig(map[string]string{"countedEnabled": "true"})

	_, leaderPort, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	ha := []string{"--ha", "--ha-lease-name=counted"}
	leader := h.startOn(leaderPort, append(ha, "--ha-identity=leader")...)
	leader.WaitReady()
	standby := h.startOn(h.port, append(ha, "--ha-identity=standby")...)
	// The standby has loaded the hooks once it serves their webhooks.
	ctx, cancel := context.WithTimeout(t.Context(), operatortest.Timeout)
	defer cancel()
	h.Poll("the standby to run the hook's --config", func() bool { return len(configRunsBy(t, runs)) == 2 })

	leader.Stop()
	if _, err := standby.Log().Wait(ctx, 0, func(l operatortest.Line) bool { return l.Msg == "first converge done" }); err != nil {
		t.Fatalf("the standby did not converge once it led: %v", err)
	}
	for pid, n := range configRunsBy(t, runs) {
		if n != 1 {
			t.Errorf("operator %s ran the unchanged hook's --config %d times, want once", pid, n)
		}
	}
}

// configRunsBy counts the --config runs countedHook recorded, by the pid
// of the operator that started them.
func configRunsBy(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for pid := range strings.FieldsSeq(string(data)) {
		by[pid]++
	}
	return by
}
