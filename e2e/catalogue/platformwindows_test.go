package catalogue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// platformNamespace is platform-windows' namespace, from its module.yaml.
// Only this test enables the module, so no other operator shares it.
const platformNamespace = "platform-maintenance"

// TestPlatformWindowsRequiresMaintenanceWindows shows module.yaml: the
// module lives in its own namespace, created with the module's labels,
// and runs only with the module it requires, once that one is ready.
func TestPlatformWindowsRequiresMaintenanceWindows(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"platformWindowsEnabled": "true", "namespaceDefaultsEnabled": "false"})
	h.start()
	h.WaitReady()
	// Its requirement is disabled by default: so is it, saying why.
	m := h.WaitModule("platform-windows", "disabled by its requirement", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseDisabled })
	if m.By != status.SourceRequirement || m.Message != "requires maintenance-windows, which is disabled" || m.Namespace != platformNamespace {
		t.Errorf("platform-windows = %+v", m)
	}

	h.SetConfig(map[string]string{"platformWindowsEnabled": "true", "maintenanceWindowsEnabled": "true", "namespaceDefaultsEnabled": "false"})
	h.WaitModule("platform-windows", "ready", func(m status.ModuleStatus) bool { return m.Phase == status.PhaseReady })
	ns, err := h.Client.CoreV1().Namespaces().Get(t.Context(), platformNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["addon-operator.io/module"] != "platform-windows" {
		t.Errorf("namespace labels %v", ns.Labels)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := dyn.Resource(windowsGVR).Namespace(platformNamespace).Get(t.Context(), "node-patching", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("platform-windows' MaintenanceWindow: %v", err)
	}
	spec, _, _ := unstructured.NestedMap(w.Object, "spec")
	want := map[string]any{"schedule": "0 4 * * 2", "duration": "1h", "description": "node patching by the platform team"}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("MaintenanceWindow spec (-want +got):\n%s", diff)
	}
	// maintenance-windows' own windows stay in the operator's namespace.
	if _, ok := h.windows()["weekly"]; !ok {
		t.Errorf("maintenance-windows' default window missing from %s: %v", h.Namespace, h.windows())
	}
	if f := h.failures(); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}
