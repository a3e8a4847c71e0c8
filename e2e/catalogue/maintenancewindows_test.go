package catalogue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

const windowsCRD = "maintenancewindows.catalogue.addon-operator.io"

var windowsGVR = schema.GroupVersionResource{Group: "catalogue.addon-operator.io", Version: "v1alpha1", Resource: "maintenancewindows"} //nolint:gochecknoglobals // a constant in all but name

// crdEstablished reports whether the module's CRD exists and is
// established.
func crdEstablished(t *testing.T) bool {
	t.Helper()
	ext, err := apiextensionsclient.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), windowsCRD, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// windows returns the MaintenanceWindows in the operator's namespace as
// name -> spec.
func (h *harness) windows() map[string]any {
	h.T.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		h.T.Fatal(err)
	}
	list, err := dyn.Resource(windowsGVR).Namespace(h.Namespace).List(h.T.Context(), metav1.ListOptions{})
	if err != nil {
		h.T.Fatalf("list MaintenanceWindows: %v", err)
	}
	out := map[string]any{}
	for i := range list.Items {
		spec, _, _ := unstructured.NestedMap(list.Items[i].Object, "spec")
		out[list.Items[i].GetName()] = spec
	}
	return out
}

// crdExists reports whether the module's CRD exists.
func crdExists(t *testing.T) bool {
	t.Helper()
	ext, err := apiextensionsclient.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), windowsCRD, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// ensureCRD waits for the operator to apply the module's CRD from crds/
// and the API server to establish it.
func ensureCRD(t *testing.T, h *harness) {
	t.Helper()
	h.Poll("the CRD from crds/ to be established", func() bool { return crdEstablished(t) })
}

// TestCRDAfterAnotherChart enables maintenance-windows together with
// echo-service, which renders first (order 20 < 40), as a user enabling
// several modules does. It is not parallel: it needs a cluster without the
// CRD, and serial tests run before the parallel TestMaintenanceWindows
// creates it.
func TestCRDAfterAnotherChart(t *testing.T) {
	if crdExists(t) {
		t.Fatalf("%s exists already: the scenario needs a control plane without it (serial tests run before parallel ones)", windowsCRD)
	}
	h := newHarness(t)
	h.SetConfig(map[string]string{"maintenanceWindowsEnabled": "true", "echoServiceEnabled": "true", "namespaceDefaultsEnabled": "false"})
	h.start()
	h.Poll("the hook ConfigMap", func() bool { return h.ConfigMapData("maintenance-windows-installed") != nil })
	if f := h.failures(); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}

func TestMaintenanceWindows(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.SetConfig(map[string]string{"maintenanceWindowsEnabled": "true", "namespaceDefaultsEnabled": "false"})
	h.start()
	h.WaitReady()

	// The CRD from crds/ must be established before the release installs.
	ensureCRD(t, h)
	h.Poll("the hook ConfigMap", func() bool { return h.ConfigMapData("maintenance-windows-installed") != nil })
	want := map[string]any{"weekly": map[string]any{"schedule": "0 3 * * 6", "duration": "2h", "description": "Saturday night"}}
	if diff := cmp.Diff(want, h.windows()); diff != "" {
		t.Errorf("MaintenanceWindows (-want +got):\n%s", diff)
	}
	// The chart hook ran after the install.
	if diff := cmp.Diff(map[string]string{"revision": "1", "windows": "weekly"}, h.ConfigMapData("maintenance-windows-installed")); diff != "" {
		t.Errorf("hook ConfigMap after the install (-want +got):\n%s", diff)
	}

	// A window set in the ConfigMap merges with the default set; the hook
	// runs again after the upgrade.
	h.SetConfig(map[string]string{
		"maintenanceWindowsEnabled": "true", "namespaceDefaultsEnabled": "false",
		"maintenanceWindows": "windows:\n  nightly: {schedule: \"0 2 * * *\", duration: 1h30m}\n",
	})
	h.Poll("the hook ConfigMap of revision 2", func() bool {
		return h.ConfigMapData("maintenance-windows-installed")["revision"] == "2"
	})
	if diff := cmp.Diff(map[string]string{"revision": "2", "windows": "nightly,weekly"}, h.ConfigMapData("maintenance-windows-installed")); diff != "" {
		t.Errorf("hook ConfigMap after the upgrade (-want +got):\n%s", diff)
	}
	nightly := map[string]any{"schedule": "0 2 * * *", "duration": "1h30m"}
	want["nightly"] = nightly
	if diff := cmp.Diff(want, h.windows()); diff != "" {
		t.Errorf("MaintenanceWindows after the upgrade (-want +got):\n%s", diff)
	}

	// An explicit null removes the default window: Helm deletes it.
	h.SetConfig(map[string]string{
		"maintenanceWindowsEnabled": "true", "namespaceDefaultsEnabled": "false",
		"maintenanceWindows": "windows:\n  weekly: null\n  nightly: {schedule: \"0 2 * * *\", duration: 1h30m}\n",
	})
	h.Poll("the hook ConfigMap of revision 3", func() bool {
		return h.ConfigMapData("maintenance-windows-installed")["revision"] == "3"
	})
	if diff := cmp.Diff(map[string]any{"nightly": nightly}, h.windows()); diff != "" {
		t.Errorf("MaintenanceWindows after removing weekly (-want +got):\n%s", diff)
	}
	if got := h.ConfigMapData("maintenance-windows-installed")["windows"]; got != "nightly" {
		t.Errorf("hook ConfigMap windows %q, want nightly", got)
	}
	if f := h.failures(); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}
