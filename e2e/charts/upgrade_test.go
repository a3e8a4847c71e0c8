package charts

import (
	"path/filepath"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// upgradeHookModule is a module whose manifests do not depend on the
// values, with a pre-upgrade hook ConfigMap <name>-upgraded that records
// the revision it ran for.
func upgradeHookModule(name string) map[string]string {
	return map[string]string{
		name + "/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n",
		name + "/templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + name + `-upgraded
  annotations:
    helm.sh/hook: pre-upgrade
data:
  revision: "{{ .Release.Revision }}"
`,
	}
}

// A change of global values that renders the same manifests skips the
// upgrade, and with it the chart's upgrade hooks, unless the module says
// upgradeOnValuesChange: always.
func TestChartsUpgradeOnValuesChange(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	files := upgradeHookModule("always")
	files["always/module.yaml"] = "upgradeOnValuesChange: always\n"
	for k, v := range upgradeHookModule("rendered") {
		files[k] = v
	}
	writeFiles(t, modules, files)
	config := map[string]string{"alwaysEnabled": "true", "renderedEnabled": "true"}
	h.SetConfig(config)
	h.Start(operatortest.Options{ModulesDir: modules})
	for _, name := range []string{"always", "rendered"} {
		h.WaitModule(name, "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
		if rev := h.ReleaseRevision(name); rev != 1 {
			t.Fatalf("%s: revision %d after the install, want 1", name, rev)
		}
	}

	renderedRuns := operatortest.RunsOf("rendered", "success")
	before := h.Metric(operatortest.ModuleRuns, renderedRuns)
	config["global"] = "color: blue\n"
	h.SetConfig(config)
	h.Poll("always to be upgraded, its pre-upgrade hook run", func() bool {
		return h.ReleaseRevision("always") == 2 && h.ConfigMapData("always-upgraded")["revision"] == "2"
	})
	h.WaitMetric(operatortest.ModuleRuns, renderedRuns, "to grow", operatortest.AtLeast(before+1))
	if rev := h.ReleaseRevision("rendered"); rev != 1 {
		t.Errorf("rendered: revision %d after a global change it does not render, want 1 (skipped)", rev)
	}
	if data := h.ConfigMapData("rendered-upgraded"); data != nil {
		t.Errorf("rendered's pre-upgrade hook ran: %v", data)
	}
}
