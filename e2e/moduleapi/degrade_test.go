package moduleapi

import (
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// removeCRDs deletes the addon-operator.io CRDs and waits until they are
// gone; the tests that need them install them again.
func removeCRDs(t *testing.T) {
	t.Helper()
	crds := apiextensions.NewForConfigOrDie(cp.Config).ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range []string{v1.ResourceModules + "." + v1.Group, v1.ResourceModuleConfigs + "." + v1.Group} {
		if err := crds.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete CRD %s: %v", name, err)
		}
		operatortest.Poll(t, "CRD "+name+" gone", func() bool {
			_, err := crds.Get(t.Context(), name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}

// TestWithoutCRDs: without the CRDs the operator runs on the ConfigMap,
// even when asked for ModuleConfigs, and says once what it cannot do.
func TestWithoutCRDs(t *testing.T) {
	removeCRDs(t)
	h := newHarness(t)
	h.chartModule("010-nc-echo", "ncEcho")
	h.SetConfig(map[string]string{"ncEchoEnabled": "true", "ncEcho": "greeting: plain\n"})
	op := h.start("--config-source=moduleconfig")
	op.WaitReady()
	h.Poll("greeting plain", func() bool { return h.greeting("nc-echo") == "plain" })
	// A change of the ConfigMap still works.
	h.SetConfig(map[string]string{"ncEchoEnabled": "true", "ncEcho": "greeting: again\n"})
	h.Poll("greeting again", func() bool { return h.greeting("nc-echo") == "again" })
	for _, msg := range []string{
		"module objects off: modules are not shown as Module objects; the operator works on without them",
		"moduleconfig source off: configuration comes from the ConfigMap",
	} {
		if n := h.CountLog(msg, nil); n != 1 {
			t.Errorf("%d log lines %q, want 1", n, msg)
		}
	}
}
