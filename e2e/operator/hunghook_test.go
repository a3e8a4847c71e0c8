package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// hungHook is module hung's beforeHelm hook: it writes "start" to
// $HUNG_TRACE, sleeps $HUNG_SLEEP seconds and writes "end".
const hungHook = `#!/bin/bash
if [ "$1" = --config ]; then
	printf 'configVersion: v1\nbeforeHelm: 1\n'
	exit 0
fi
echo start >>"$HUNG_TRACE"
sleep "$HUNG_SLEEP"
echo end >>"$HUNG_TRACE"
`

// writeHungModules writes module hung (order 10, the beforeHelm hook
// above) and others modules with a module.yaml requiring nothing, each
// with a ConfigMap, and returns the modules dir and the others' names.
func writeHungModules(t *testing.T, others int) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "modules")
	files := map[string]string{
		"010-hung/hooks/hung":        hungHook,
		"010-hung/templates/cm.yaml": configMapTemplate("hung"),
	}
	values := "hungEnabled: true\n"
	names := make([]string, 0, others)
	for i := range others {
		name := fmt.Sprintf("other%d", i)
		names = append(names, name)
		files["020-"+name+"/module.yaml"] = "weight: 20\n"
		files["020-"+name+"/templates/cm.yaml"] = configMapTemplate(name)
		values += name + "Enabled: true\n"
	}
	files["values.yaml"] = values
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if strings.Contains(name, "/hooks/") {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir, names
}

func configMapTemplate(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata: {module: " + name + "}\n"
}

// TestHungHookHoldsNoWorker: with one module worker, module hung's
// beforeHelm hook sleeps for longer than every wait of a test (and the
// others' whole converge); the other modules, which require nothing of it,
// are Ready while it still runs. The subtest "prompt" runs the same with
// a hook that ends at once: the two logged times to the others' Ready are
// the cost of the hung hook to the others.
func TestHungHookHoldsNoWorker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sleep time.Duration
	}{
		{"hung", 2 * operatortest.Timeout},
		{"prompt", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := operatortest.New(t, cp, bin)
			modules, others := writeHungModules(t, 3)
			trace := filepath.Join(t.TempDir(), "trace")
			h.SetConfig(map[string]string{})
			began := time.Now()
			h.Start(operatortest.Options{
				ModulesDir: modules,
				Args:       []string{"--module-workers=1"},
				Env:        append(os.Environ(), "HUNG_TRACE="+trace, fmt.Sprintf("HUNG_SLEEP=%d", int(tc.sleep.Seconds()))),
			})
			for _, name := range others {
				h.WaitModule(name, "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
			}
			took := time.Since(began)
			t.Logf("%s: modules %v Ready %s after the operator started", tc.name, others, took.Round(time.Millisecond))
			if tc.sleep == 0 {
				h.WaitModule("hung", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
				return
			}
			data, err := os.ReadFile(trace)
			if err != nil {
				t.Fatalf("hung's hook never started: %v", err)
			}
			if got := strings.Fields(string(data)); len(got) != 1 || got[0] != "start" {
				t.Errorf("hung's hook trace %v, want it still running (start only)", got)
			}
			if m, _ := h.Newest().Module("hung"); m.Phase == status.PhaseReady {
				t.Errorf("hung is Ready while its beforeHelm hook runs")
			}
		})
	}
}
