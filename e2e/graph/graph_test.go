package graph

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// writeModules writes files (path -> content) below a new modules dir and
// returns it.
func writeModules(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "modules")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`

func configMapTemplate(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata: {release-namespace: {{ .Release.Namespace }}}\n"
}

func exists(t *testing.T, h *operatortest.Harness, ns, configMap string) bool {
	t.Helper()
	_, err := h.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), configMap, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestDependentWaitsForItsRequirementToBeReady(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	webNS := h.Namespace + "-web"
	modules := writeModules(t, map[string]string{
		"web/module.yaml":               "weight: 10\nnamespace: " + webNS + "\nversion: 1.2.0\ndescription: a web server\n",
		"web/templates/deployment.yaml": deploymentTemplate,
		"web/templates/settings.yaml":   configMapTemplate("web-settings"),
		"app/module.yaml":               "weight: 20\nrequires:\n  web: \">= 1.0\"\n",
		"app/templates/cm.yaml":         configMapTemplate("app"),
		"other/module.yaml":             "weight: 30\n",
		"other/templates/cm.yaml":       configMapTemplate("other"),
		"stuck/module.yaml":             "weight: 40\nreadinessTimeout: 1s\n",
		"stuck/templates/job.yaml":      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: stuck}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n",
	})
	h.SetConfig(map[string]string{"webEnabled": "true", "appEnabled": "true", "otherEnabled": "true", "stuckEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules, Args: []string{"--retry-delay=200ms", "--retry-max-delay=1s"}})

	// other requires nothing and goes on while web's Deployment is not
	// available and app waits for web.
	h.Poll("other's ConfigMap", func() bool { return exists(t, h, h.Namespace, "other") })
	web := h.WaitModule("web", "waiting for its Deployment", func(m status.ModuleStatus) bool {
		return strings.HasPrefix(m.Message, "waiting for Deployment "+webNS+"/web: ")
	})
	t.Logf("web while its Deployment has no status: %q", web.Message)
	if web.Namespace != webNS || web.Version != "1.2.0" || web.Phase != status.PhaseRunning {
		t.Errorf("web = %+v", web)
	}
	app := h.WaitModule("app", "held for web", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseWaiting })
	if app.Message != "waiting for module web to be ready" || !slices.Equal(app.Requires, []string{"web"}) {
		t.Errorf("app while web is not ready = %+v", app)
	}
	if exists(t, h, h.Namespace, "app") {
		t.Error("app was deployed before web was ready")
	}
	h.WaitMetric("addon_operator_module_waiting_for", map[string]string{"module": "web", "kind": "Deployment"}, "to be 1",
		func(v float64) bool { return v == 1 })

	// The namespace was created with the module's labels; namespace-less
	// objects of the chart landed there.
	ns, err := h.Client.CoreV1().Namespaces().Get(t.Context(), webNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["addon-operator.io/module"] != "web" {
		t.Errorf("namespace %s labels %v", webNS, ns.Labels)
	}
	settings, err := h.Client.CoreV1().ConfigMaps(webNS).Get(t.Context(), "web-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("web's ConfigMap without a namespace in its template, in %s: %v", webNS, err)
	}
	if got := settings.Data["release-namespace"]; got != webNS {
		t.Errorf("web's .Release.Namespace = %q, want %q", got, webNS)
	}

	// A Job that never completes fails its module after the module's
	// readiness timeout, naming the Job.
	h.WaitModule("stuck", "failed on its readiness timeout", operatortest.ErrorContains("not ready after 1s: Job "+h.Namespace+"/stuck"))

	h.MakeDeploymentAvailable(webNS, "web")
	h.WaitModule("web", "ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady && m.Message == "" })
	h.Poll("app's ConfigMap once web is ready", func() bool { return exists(t, h, h.Namespace, "app") })
	h.WaitModule("app", "ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	h.WaitReady()
	h.WaitMetric("addon_operator_module_ready", map[string]string{"module": "web"}, "to be 1", func(v float64) bool { return v == 1 })

	// Objects in the module's namespace are healed there.
	if err := h.Client.CoreV1().ConfigMaps(webNS).Delete(t.Context(), "web-settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Poll("web's ConfigMap put back in "+webNS, func() bool { return exists(t, h, webNS, "web-settings") })

	disableRequirement(t, h, webNS)
}

// disableRequirement disables web: app, which requires it, is disabled
// too and deleted first, and web's namespace stays.
func disableRequirement(t *testing.T, h *operatortest.Harness, webNS string) {
	t.Helper()
	h.SetConfig(map[string]string{"webEnabled": "false", "appEnabled": "true", "otherEnabled": "true", "stuckEnabled": "true"})
	app := h.WaitModule("app", "disabled by its requirement", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseDisabled })
	if app.By != status.SourceRequirement || app.Message != "requires web, which is disabled" {
		t.Errorf("app once web is disabled = %+v", app)
	}
	h.WaitModule("web", "disabled", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseDisabled })
	// The phase can change before the uninstall's log line is written.
	h.WaitLog(1, "release uninstalled", map[string]string{"module": "web"})
	var uninstalled []string
	for _, l := range h.Lines() {
		if l.Msg == "release uninstalled" {
			uninstalled = append(uninstalled, l.Attr("module"))
		}
	}
	if !slices.Equal(uninstalled, []string{"app", "web"}) {
		t.Errorf("releases uninstalled in order %v, want app before web", uninstalled)
	}
	if _, err := h.Client.CoreV1().Namespaces().Get(t.Context(), webNS, metav1.GetOptions{}); err != nil {
		t.Errorf("web's namespace after disabling web: %v", err)
	}
}

func TestCycleIsRejectedWithItsChain(t *testing.T) {
	t.Parallel()
	modules := writeModules(t, map[string]string{
		"a/module.yaml": "requires: {b: \"\"}\n",
		"b/module.yaml": "requires: {c: \"\"}\n",
		"c/module.yaml": "requires: {a: \"\"}\n",
	})
	cmd := exec.CommandContext(t.Context(), bin, "modules", "list", "--modules-dir", modules)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("modules list accepted a cycle:\n%s", out)
	}
	if want := "modules wait for each other: a -> b -> c -> a"; !strings.Contains(string(out), want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}
