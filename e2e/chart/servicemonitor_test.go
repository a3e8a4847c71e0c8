package chart

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// serviceMonitorResource is prometheus-operator's ServiceMonitor.
func serviceMonitorResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
}

// ensureServiceMonitorCRD installs a schemaless ServiceMonitor CRD, as
// prometheus-operator would, once per control plane, and waits until it is
// served.
func ensureServiceMonitorCRD(t *testing.T) {
	t.Helper()
	client, err := apiextensions.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := serviceMonitorResource()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: gvr.Resource + "." + gvr.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvr.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: gvr.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceMonitor CRD: %v", err)
	}
	eventually(t, "ServiceMonitor CRD established", func() error {
		got, err := crds.Get(t.Context(), crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not established")
	})
}

// serviceMonitors lists the ServiceMonitors in ns.
func serviceMonitors(t *testing.T, ns string) []unstructured.Unstructured {
	t.Helper()
	client, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.Resource(serviceMonitorResource()).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list ServiceMonitors: %v", err)
	}
	return list.Items
}

// eventually polls check until it returns nil, failing the test after
// waitTimeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, waitTimeout, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(fmt.Errorf("%s: %w", what, t.Context().Err()))
		case <-tick.C:
		}
	}
}
