package charts

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// A pre-install hook Job that never finishes fails the module after the
// module's chartHookTimeout, not after --helm-timeout (20 minutes by
// default), with an error that names the Job and says how it stands.
func TestChartsHookJobTimeoutNamesTheJob(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"hook-hangs/module.yaml": "chartHookTimeout: 5s\n",
		"hook-hangs/templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: hangs
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        ` + cluster.AnnotationRunDuration + `: 24h
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.example/migrate:1}]
`,
		"hook-hangs/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after-hangs\n",
	})
	h.SetConfig(map[string]string{"hookHangsEnabled": "true"})
	start := time.Now()
	h.Start(operatortest.Options{ModulesDir: modules})

	hangs := h.WaitModule("hook-hangs", "failed naming its hook Job", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseFailed && m.LastError != ""
	})
	t.Logf("failed %s after the start: %s", time.Since(start).Round(time.Second), hangs.LastError)
	// The first run installs (pre-install); a retry upgrades the failed
	// release (pre-upgrade): the Job is the same.
	if !operatortest.ErrorContains("pre-", " hook Job "+h.Namespace+"/hangs not complete after 5s: ", "Pods active")(hangs) {
		t.Errorf("hook-hangs' error %q does not name its Job and its state", hangs.LastError)
	}
}
