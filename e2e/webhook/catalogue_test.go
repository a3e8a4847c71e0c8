package webhook

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// TestCatalogueMaintenanceWindows runs the shipped maintenance-windows
// module with the webhook server: its v1alpha1 objects read as v1beta1
// through its conversion hook, and its validating hook refuses windows
// longer than a day.
func TestCatalogueMaintenanceWindows(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, file, _, _ := runtime.Caller(0)
	h.SetConfig(map[string]string{"maintenanceWindowsEnabled": "true", "namespaceDefaultsEnabled": "false", "nodeExporterEnabled": "false"})
	h.Start(operatortest.Options{
		ModulesDir:     filepath.Join(filepath.Dir(file), "..", "..", "modules"),
		GlobalHooksDir: filepath.Join(h.dir, "global-hooks"),
		Args: []string{
			"--webhook-server", "--webhook-url=https://127.0.0.1:" + h.port,
			"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + h.port,
			"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
		},
	})
	h.WaitModule("maintenance-windows", "deployed", func(m status.ModuleStatus) bool { return m.Revision > 0 })
	const crd = "maintenancewindows.catalogue.addon-operator.io"
	t.Cleanup(func() {
		gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		_ = h.dyn.Resource(gvr).Delete(context.WithoutCancel(t.Context()), crd, metav1.DeleteOptions{})
	})
	window := func(version, name string) (*unstructured.Unstructured, error) {
		gvr := schema.GroupVersionResource{Group: "catalogue.addon-operator.io", Version: version, Resource: "maintenancewindows"}
		return h.dyn.Resource(gvr).Namespace(h.Namespace).Get(t.Context(), name, metav1.GetOptions{})
	}
	// The release's default window, stored as v1alpha1, read as v1beta1.
	var weekly *unstructured.Unstructured
	h.Poll("the weekly window read as v1beta1", func() bool {
		w, err := window("v1beta1", "weekly")
		weekly = w
		return err == nil
	})
	if got, _, _ := unstructured.NestedInt64(weekly.Object, "spec", "durationMinutes"); got != 120 {
		t.Errorf("weekly at v1beta1: spec %v, want durationMinutes 120", weekly.Object["spec"])
	}
	// A window longer than a day is refused with the hook's message.
	long := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "catalogue.addon-operator.io/v1beta1", "kind": "MaintenanceWindow",
		"metadata": map[string]any{"name": "long"}, "spec": map[string]any{"schedule": "0 1 * * *", "durationMinutes": int64(2000)},
	}}
	gvr := schema.GroupVersionResource{Group: "catalogue.addon-operator.io", Version: "v1beta1", Resource: "maintenancewindows"}
	_, err := h.dyn.Resource(gvr).Namespace(h.Namespace).Create(t.Context(), long, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "maintenance window long: 2000 minutes is longer than a day") {
		t.Errorf("create a 2000-minute window: %v, want the validating hook's refusal", err)
	}
	// Written as v1beta1, kept as v1alpha1.
	long.Object["spec"] = map[string]any{"schedule": "0 1 * * *", "durationMinutes": int64(90)}
	if _, err := h.dyn.Resource(gvr).Namespace(h.Namespace).Create(t.Context(), long, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a 90-minute window at v1beta1: %v", err)
	}
	alpha, err := window("v1alpha1", "long")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(alpha.Object, "spec", "duration"); got != "1h30m" {
		t.Errorf("read at v1alpha1: spec %v, want duration 1h30m", alpha.Object["spec"])
	}
}
