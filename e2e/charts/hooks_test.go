package charts

import (
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// A pre-delete hook Job that never finishes fails the module's delete
// after the module's chartHookTimeout, not after --helm-timeout, with an
// error that names the Job and says how it stands; the release and its
// objects stay for the delete's retry.
func TestChartsPreDeleteHookJobTimeoutNamesTheJob(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"delete-hangs/module.yaml": "chartHookTimeout: 5s\n",
		"delete-hangs/templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: cleanup-hangs
  annotations:
    helm.sh/hook: pre-delete
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        ` + cluster.AnnotationRunDuration + `: 24h
    spec:
      restartPolicy: Never
      containers: [{name: cleanup, image: registry.example/cleanup:1}]
`,
		"delete-hangs/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept-while-hanging\n",
	})
	h.SetConfig(map[string]string{"deleteHangsEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules})
	h.WaitModule("delete-hangs", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })

	h.SetConfig(map[string]string{"deleteHangsEnabled": "false"})
	hangs := h.WaitModule("delete-hangs", "delete failed naming its hook Job",
		operatortest.ErrorContains("pre-delete hook Job "+h.Namespace+"/cleanup-hangs not complete after 5s: ", "Pods active"))
	t.Logf("delete failed: %s", hangs.LastError)
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "kept-while-hanging", metav1.GetOptions{}); err != nil {
		t.Errorf("release object after the failed pre-delete hook: %v", err)
	}
}
