package kube

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
)

func TestPatchPatchOperations(t *testing.T) {
	const a = "apiVersion: v1\nkind: ConfigMap\nnamespace: NS\nname: a\n"
	const missing = "kind: ConfigMap\nnamespace: NS\nname: missing\n"
	tests := []struct {
		name string
		ops  string
		err  func(error) bool
		want map[string]any // data of a afterwards
	}{
		{"MergePatch", "operation: MergePatch\nmergePatch: {data: {k: v}}\n" + a, nil, map[string]any{"old": "1", "k": "v"}},
		{"MergePatch as a string", "operation: MergePatch\nmergePatch: |\n  data:\n    old: null\n    k: v\n" + a, nil, map[string]any{"k": "v"}},
		{"JSONPatch", "operation: JSONPatch\njsonPatch: [{op: replace, path: /data/old, value: \"2\"}]\n" + a, nil, map[string]any{"old": "2"}},
		{"JQPatch", "operation: JQPatch\njqFilter: '.data.k = (.data.old + \"!\")'\n" + a, nil, map[string]any{"old": "1", "k": "1!"}},
		{"JQPatch without change", "operation: JQPatch\njqFilter: .data.old = \"1\"\n" + a, nil, map[string]any{"old": "1"}},
		{"MergePatch of a missing object", "operation: MergePatch\nmergePatch: {data: {k: v}}\n" + missing, apierrors.IsNotFound, map[string]any{"old": "1"}},
		{"MergePatch of a missing object ignored", "operation: MergePatch\nignoreMissingObject: true\nmergePatch: {data: {k: v}}\n" + missing, nil, map[string]any{"old": "1"}},
		{"JSONPatch of a missing object", "operation: JSONPatch\njsonPatch: [{op: remove, path: /data}]\n" + missing, apierrors.IsNotFound, map[string]any{"old": "1"}},
		{"JSONPatch of a missing object ignored", "operation: JSONPatch\nignoreMissingObject: true\njsonPatch: [{op: remove, path: /data}]\n" + missing, nil, map[string]any{"old": "1"}},
		{"JQPatch of a missing object", "operation: JQPatch\njqFilter: .data = {}\n" + missing, apierrors.IsNotFound, map[string]any{"old": "1"}},
		{"JQPatch of a missing object ignored", "operation: JQPatch\nignoreMissingObject: true\njqFilter: .data = {}\n" + missing, nil, map[string]any{"old": "1"}},
		{"JSONPatch whose test fails", "operation: JSONPatch\njsonPatch: [{op: test, path: /data/old, value: \"9\"}]\n" + a, apierrors.IsInvalid, map[string]any{"old": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := patchSetup(t)
			steps := []patchStep{
				{name: "setup", ops: "operation: Create\n" + patchCM("a", "{old: \"1\"}")},
				{name: tc.name, ops: tc.ops, err: tc.err, want: map[string]map[string]any{"a": tc.want, "missing": nil}},
			}
			patchRunSteps(t, e, steps)
		})
	}
}

// A cluster-scoped kind from a named group, addressed without apiVersion and
// with a namespace that does not apply to it.
func TestPatchResolvesPreferredVersionOfClusterScopedKind(t *testing.T) {
	e := patchSetup(t)
	name := e.ns + "-role"
	roles := e.dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"})
	ops := "operation: Create\nobject: {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: " + name + "}}\n" +
		"---\noperation: MergePatch\nkind: ClusterRole\nnamespace: NS\nname: " + name + "\nmergePatch: {metadata: {labels: {patched: \"yes\"}}}\n"
	if err := e.apply(t.Context(), t, ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := patchGet(t, roles, name); got == nil || got.GetLabels()["patched"] != "yes" {
		t.Fatalf("cluster role = %v, want label patched=yes", got)
	}
	if err := e.apply(t.Context(), t, "operation: DeleteInBackground\nkind: ClusterRole\nname: "+name+"\n"); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := patchGet(t, roles, name); got != nil {
		t.Errorf("cluster role still exists")
	}
}

const (
	patchGadgetGroup = "patcher.e2e.example.com"
	patchGadgetCRD   = "gadgets." + patchGadgetGroup
)

// TestPatchStatusSubresource installs a CRD with a status subresource after
// the Patcher has filled its discovery cache, so it also proves that kinds
// appearing later are found.
func TestPatchStatusSubresource(t *testing.T) {
	e := patchSetup(t)
	if err := e.apply(t.Context(), t, "operation: Create\n"+patchCM("warm-up", "{}")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	patchInstallGadgetCRD(t)
	gadgets := e.dyn.Resource(schema.GroupVersionResource{Group: patchGadgetGroup, Version: "v1", Resource: "gadgets"}).Namespace(e.ns)
	const g = "apiVersion: " + patchGadgetGroup + "/v1\nkind: Gadget\nnamespace: NS\nname: g\n"
	steps := []struct {
		name string
		ops  string
		want map[string]any // spec and status of g afterwards
	}{
		{"CreateOrUpdate writes status through the subresource",
			"operation: CreateOrUpdate\nsubresource: status\nobject: {apiVersion: " + patchGadgetGroup + "/v1, kind: Gadget, metadata: {name: g, namespace: NS}, spec: {size: 1}, status: {count: 1}}\n",
			map[string]any{"spec": map[string]any{"size": int64(1)}, "status": map[string]any{"count": int64(1)}}},
		{"MergePatch of the object ignores status",
			"operation: MergePatch\nmergePatch: {spec: {size: 2}, status: {count: 9}}\n" + g,
			map[string]any{"spec": map[string]any{"size": int64(2)}, "status": map[string]any{"count": int64(1)}}},
		{"MergePatch of status", "operation: MergePatch\nsubresource: status\nmergePatch: {spec: {size: 9}, status: {count: 2}}\n" + g,
			map[string]any{"spec": map[string]any{"size": int64(2)}, "status": map[string]any{"count": int64(2)}}},
		{"JSONPatch of status", "operation: JSONPatch\nsubresource: status\njsonPatch: [{op: replace, path: /status/count, value: 3}]\n" + g,
			map[string]any{"spec": map[string]any{"size": int64(2)}, "status": map[string]any{"count": int64(3)}}},
		{"JQPatch of status", "operation: JQPatch\nsubresource: status\njqFilter: .status.count += 1 | .spec.size = 9\n" + g,
			map[string]any{"spec": map[string]any{"size": int64(2)}, "status": map[string]any{"count": int64(4)}}},
		{"status of a missing object ignored", "operation: JQPatch\nsubresource: status\nignoreMissingObject: true\njqFilter: .status.count = 0\nkind: Gadget\nnamespace: NS\nname: missing\n",
			map[string]any{"spec": map[string]any{"size": int64(2)}, "status": map[string]any{"count": int64(4)}}},
	}
	for _, step := range steps {
		if err := e.apply(t.Context(), t, step.ops); err != nil {
			t.Fatalf("%s: Apply: %v", step.name, err)
		}
		obj := patchGet(t, gadgets, "g")
		if obj == nil {
			t.Fatalf("%s: gadget does not exist", step.name)
		}
		got := map[string]any{"spec": obj.Object["spec"], "status": obj.Object["status"]}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: gadget (-want +got):\n%s", step.name, diff)
		}
	}
}

// A kind without the subresource answers 404 without naming an object, which
// ignoreMissingObject does not hide.
func TestPatchMissingSubresourceIsAnError(t *testing.T) {
	e := patchSetup(t)
	ops := "operation: Create\n" + patchCM("a", "{}") +
		"---\noperation: MergePatch\nsubresource: status\nignoreMissingObject: true\nkind: ConfigMap\nnamespace: NS\nname: a\nmergePatch: {status: {x: y}}\n"
	if err := e.apply(t.Context(), t, ops); !apierrors.IsNotFound(err) {
		t.Errorf("Apply error = %v, want NotFound", err)
	}
}

// patchInstallGadgetCRD installs the namespaced Gadget kind with a status
// subresource, once per control plane, and waits until it is served.
func patchInstallGadgetCRD(t *testing.T) {
	t.Helper()
	client, err := apiextensions.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("apiextensions client: %v", err)
	}
	object := &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: patchGadgetCRD},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: patchGadgetGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": *object, "status": *object},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create CRD: %v", err)
	}
	disco := cp.Clientset(t).Discovery()
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, patchGadgetCRD, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				// The aggregated discovery document, which the Patcher's
				// Discovery reads, lists new kinds a little after the
				// group-version endpoint serves them: wait for it.
				return servesKind(disco, patchGadgetGroup+"/v1", "Gadget"), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established and served: %v", patchGadgetCRD, err)
	}
}

// servesKind reports whether the server's discovery (aggregated where the
// server offers it, as the operator reads it) lists kind in groupVersion.
func servesKind(d discovery.DiscoveryInterface, groupVersion, kind string) bool {
	_, lists, err := d.ServerGroupsAndResources()
	if err != nil {
		return false
	}
	for _, l := range lists {
		if l.GroupVersion != groupVersion {
			continue
		}
		for i := range l.APIResources {
			if l.APIResources[i].Kind == kind {
				return true
			}
		}
	}
	return false
}
