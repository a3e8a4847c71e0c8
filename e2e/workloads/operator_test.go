package workloads

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// writeFiles writes files (path -> content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// repoModule returns the path of this repository's module dir name.
func repoModule(t *testing.T, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locate test source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "modules", name)
}

// copyDir copies the files below src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// The quick start's module, echo-service, becomes Ready once its
// Deployment is available: the controllers create its Pods, the simulated
// node starts them, and the operator's readiness wait ends.
func TestEchoServiceBecomesReady(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	copyDir(t, repoModule(t, "020-echo-service"), filepath.Join(modules, "020-echo-service"))
	h.SetConfig(map[string]string{"echoServiceEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules})

	h.WaitModule("echo-service", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	if !deploymentAvailable(t, h.Client, h.Namespace, "echo-service") {
		t.Error("echo-service is Ready while its Deployment is not available")
	}
	h.WaitReady()
}

// hookJob is a chart hook Job run before install; annotations go on its
// Pod and decide how the Pod ends.
func hookJob(name, annotations string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  name: ` + name + `
  annotations:
    helm.sh/hook: pre-install
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: ` + annotations + `
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.example/migrate:1}]
`
}

func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

// A pre-install hook Job that completes lets the install go on; one that
// fails fails the module's run, naming the Job and its condition; one that
// never finishes fails it once --helm-timeout has passed, naming the Job
// and how it stands.
//
// What follows is not asserted, as it is not what a user would want: the
// run after a failed pre-install hook upgrades the failed release, which
// skips pre-install hooks, so the chart's objects are deployed and the
// module recovers although its hook never succeeded.
func TestChartHookJobsDecideTheInstall(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"hook-completes/templates/job.yaml": hookJob("completes", "{}"),
		"hook-completes/templates/cm.yaml":  configMap("after-completes"),
		"hook-fails/templates/job.yaml":     hookJob("fails", `{"`+cluster.AnnotationExitCode+`": "3"}`),
		"hook-fails/templates/cm.yaml":      configMap("after-fails"),
		"hook-hangs/templates/job.yaml":     hookJob("hangs", `{"`+cluster.AnnotationRunDuration+`": "24h"}`),
		"hook-hangs/templates/cm.yaml":      configMap("after-hangs"),
	})
	h.SetConfig(map[string]string{"hookCompletesEnabled": "true", "hookFailsEnabled": "true", "hookHangsEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--helm-timeout=15s"}})

	h.WaitModule("hook-completes", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	if got := jobCondition(t, h.Client, h.Namespace, "completes"); got != batchv1.JobComplete {
		t.Errorf("hook Job completes: condition %q, want Complete", got)
	}
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), "after-completes", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap after-completes after its hook completed: %v", err)
	}

	fails := h.WaitModule("hook-fails", "failed naming its hook Job", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseFailed && m.LastError != ""
	})
	if !operatortest.ErrorContains("pre-install hook Job "+h.Namespace+"/fails failed: ", "BackoffLimitExceeded")(fails) {
		t.Errorf("hook-fails' error %q does not name its failed Job", fails.LastError)
	}

	hangs := h.WaitModule("hook-hangs", "failed on --helm-timeout", func(m status.ModuleStatus) bool {
		return m.Phase == status.PhaseFailed && m.LastError != ""
	})
	if !operatortest.ErrorContains("pre-install hook Job " + h.Namespace + "/hangs not complete after ")(hangs) {
		t.Errorf("hook-hangs' error %q does not name its Job", hangs.LastError)
	}
}
