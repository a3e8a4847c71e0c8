package attack

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// installAPICRDs creates the addon-operator.io CRDs unless they
// exist, and waits until they are served.
func installAPICRDs(t *testing.T) {
	t.Helper()
	c := apiextensions.NewForConfigOrDie(cp.Config)
	for _, doc := range v1.CRDs() {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatal(err)
		}
		_, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), &crd, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD %s: %v", crd.Name, err)
		}
	}
	operatortest.Poll(t, "addon-operator.io served", func() bool {
		_, err := c.Discovery().ServerResourcesForGroupVersion(v1.APIVersion)
		return err == nil
	})
}
