package catalogue

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
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

// missingCRDError is how the module's run fails when its CRD is not
// installed.
const missingCRDError = `no matches for kind "MaintenanceWindow"`

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

// ensureCRD waits for the module's CRD to be established. An operator
// that does not apply a module's crds/ (HEAD before the CRD wiring lands)
// fails the module's runs for want of it; then the test does what an
// administrator would: it applies crds/ (as `kubectl apply -f crds/`) and
// restarts the operator, since a running operator does not see CRDs made
// after its first render (see TestCRDAfterAnotherChart), and goes on to
// check what works, the chart's custom resources and its hook.
func ensureCRD(t *testing.T, h *harness) {
	t.Helper()
	h.Poll("the CRD or the module's failure for want of it", func() bool {
		return crdEstablished(t) || h.CountLog("module run failed, will retry", map[string]string{"module": "maintenance-windows", "error": missingCRDError}) > 0
	})
	if crdExists(t) {
		h.Poll("the CRD to be established", func() bool { return crdEstablished(t) })
		return // the operator applied crds/
	}
	t.Logf("the operator did not apply %s from crds/: applying it in the test and restarting the operator", windowsCRD)
	h.Stop()
	data, err := os.ReadFile(filepath.Join(repoDir(), "modules", "040-maintenance-windows", "crds", "maintenancewindows.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), &crd, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create CRD: %v", err)
	}
	h.Poll("the CRD to be established", func() bool { return crdEstablished(t) })
	converges := h.CountLog("first converge done", nil)
	h.start()
	h.WaitLog(converges+1, "first converge done", nil)
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
	h.WaitLog(1, "first converge done", nil)

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
	if f := h.failures(missingCRDError); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}
