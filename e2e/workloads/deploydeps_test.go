package workloads

import (
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// dependentConfigMap is a ConfigMap with a werf.io/weight and one
// werf.io/deploy-dependency annotation.
func dependentConfigMap(name, weight, id, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations:\n" +
		"    werf.io/weight: \"" + weight + "\"\n    werf.io/deploy-dependency-" + id + ": " + value + "\n"
}

// A ConfigMap that names a Deployment of its release in
// werf.io/deploy-dependency-db is created only once the Deployment is
// Available, although its werf.io/weight (-10) is below the Deployment's
// (0): the dependency takes precedence, as in nelm. Dependencies that form
// a cycle fail their module, naming the objects, and create nothing.
func TestDeployDependencyOrdersCreation(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	modules := filepath.Join(t.TempDir(), "modules")
	writeFiles(t, modules, map[string]string{
		"deps/templates/db.yaml":      weightedDeployment("db", "0", "4s"),
		"deps/templates/app.yaml":     dependentConfigMap("app", "-10", "db", "state=ready,kind=Deployment,group=apps,name=db"),
		"deps/templates/free.yaml":    configMap("free"),
		"deps-cycle/templates/a.yaml": dependentConfigMap("cycle-a", "0", "b", "state=ready,kind=ConfigMap,name=cycle-b"),
		"deps-cycle/templates/b.yaml": dependentConfigMap("cycle-b", "0", "a", "state=ready,kind=ConfigMap,name=cycle-a"),
		"deps-cycle/templates/c.yaml": configMap("cycle-free"),
	})
	o := watchOrder(t, h, h.Namespace)
	h.SetConfig(map[string]string{"depsEnabled": "true", "depsCycleEnabled": "true"})
	h.Start(operatortest.Options{ModulesDir: modules})

	h.WaitModule("deps", "Ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	o.before(t, h, "db", "app")
	if rev := h.ReleaseRevision("deps"); rev != 1 {
		t.Errorf("release deps at revision %d after its install, want 1", rev)
	}

	cycle := h.WaitModule("deps-cycle", "failed", operatortest.ErrorContains("the objects depend on each other in a cycle: ConfigMap cycle-"))
	if cycle.Phase != status.PhaseFailed {
		t.Errorf("deps-cycle is %s, want Failed", cycle.Phase)
	}
	for _, name := range []string{"cycle-a", "cycle-b", "cycle-free"} {
		if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(t.Context(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("ConfigMap %s of the module with a dependency cycle was created", name)
		}
	}
}
