package operatortest

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// InstallAPICRDs creates the addon-operator.io CRDs unless they exist, and
// waits until each is established and the group is served.
func InstallAPICRDs(t *testing.T, cfg *rest.Config) {
	t.Helper()
	c := apiextensions.NewForConfigOrDie(cfg)
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	for _, doc := range v1.CRDs() {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatal(err)
		}
		if _, err := crds.Create(t.Context(), &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create CRD %s: %v", crd.Name, err)
		}
		Poll(t, "CRD "+crd.Name+" established", func() bool {
			got, err := crds.Get(t.Context(), crd.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true
				}
			}
			return false
		})
	}
	Poll(t, "addon-operator.io served", func() bool {
		_, err := c.Discovery().ServerResourcesForGroupVersion(v1.APIVersion)
		return err == nil
	})
}
