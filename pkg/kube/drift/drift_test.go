package drift

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// driftFake returns a Checker in namespace "ns" over a fake dynamic
// client holding the YAML objects live.
func driftFake(t *testing.T, live ...string) (*Checker, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	objs := make([]runtime.Object, 0, len(live))
	for _, doc := range live {
		objs = append(objs, &unstructured.Unstructured{Object: testObject(t, doc)})
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "configmaps"}:                 "ConfigMapList",
		{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList",
	}, objs...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	driftDryRuns(t, client)
	return NewChecker(client, kube.NewResolver(mapper), slog.New(slog.DiscardHandler)).WithNamespace("ns"), client
}

// driftDryRuns answers dry-run applies as a simplified API server would:
// the live object with the applied object's maps merged in and its lists
// and scalars put in place. The fake client knows no server-side apply;
// the real merging is tested on the local control plane.
func driftDryRuns(t *testing.T, client *dynamicfake.FakeDynamicClient) {
	t.Helper()
	client.PrependReactor("patch", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch, ok := action.(clienttesting.PatchActionImpl)
		if !ok || !slices.Contains(patch.GetPatchOptions().DryRun, metav1.DryRunAll) {
			return false, nil, nil
		}
		live, err := client.Tracker().Get(patch.GetResource(), patch.GetNamespace(), patch.GetName())
		if err != nil {
			return true, nil, err
		}
		out := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(live.(*unstructured.Unstructured).Object)}
		applied := testObject(t, string(patch.GetPatch()))
		driftMerge(out.Object, applied)
		out.SetManagedFields(append(out.GetManagedFields(), driftAppliedEntry(t, applied)))
		return true, out, nil
	})
}

// driftAppliedEntry is the managedFields entry a server-side apply of obj
// by FieldManager records, with the schema the server deduces for kinds it
// knows none of: maps field by field, lists whole.
func driftAppliedEntry(t *testing.T, obj map[string]any) metav1.ManagedFieldsEntry {
	t.Helper()
	tv, err := typed.DeducedParseableType.FromUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := set.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return metav1.ManagedFieldsEntry{
		Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw)),
	}
}

// testDrift is the drift of ref in the fields at paths, each a list of
// field names.
func testDrift(ref Object, paths ...[]any) Drift {
	d := Drift{Object: ref}
	for _, parts := range paths {
		p := fieldpath.MakePathOrDie(parts...)
		d.Paths = append(d.Paths, p)
		d.Fields = append(d.Fields, p.String())
	}
	return d
}

func driftMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				driftMerge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

const testManifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: edited}
data: {key: v, other: o}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: same, namespace: elsewhere}
data: {key: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: missing}
data: {key: v}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: unknown}
spec: {size: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: scaled}
spec: {replicas: 1}
---
apiVersion: v1
kind: Namespace
metadata: {name: cluster, labels: {team: a}}
`

func testLive() []string {
	return []string{
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: edited, namespace: ns, uid: u-1, resourceVersion: "7", managedFields: [
			{manager: helm, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:other": {}}}},
			{manager: kubectl-edit, operation: Update, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:key": {}}}}]},
			data: {key: changed, other: o}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: same, namespace: elsewhere}, data: {key: v, added: x}}`,
		`{apiVersion: apps/v1, kind: Deployment, metadata: {name: scaled, namespace: ns, managedFields: [
			{manager: horizontal-pod-autoscaler, operation: Update, subresource: scale, fieldsType: FieldsV1,
			 fieldsV1: {"f:spec": {"f:replicas": {}}}}]},
			spec: {replicas: 4}, status: {replicas: 4}}`,
		`{apiVersion: v1, kind: Namespace, metadata: {name: cluster, labels: {team: b}}}`,
	}
}

func TestDriftCheck(t *testing.T) {
	checker, _ := driftFake(t, testLive()...)
	got, err := checker.Check(t.Context(), testManifest)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := []Drift{
		testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}, []any{"data", "key"}),
		testDrift(Object{APIVersion: "v1", Kind: "Namespace", Name: "cluster"}, []any{"metadata", "labels", "team"}),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("drifts (-want +got):\n%s", d)
	}
	if len(got) > 0 && !slices.Equal(got[0].Fields, []string{".data.key"}) {
		t.Errorf("fields = %q, want the API server's field path syntax: .data.key", got[0].Fields)
	}
}

func TestDriftCheckWithControllers(t *testing.T) {
	checker, _ := driftFake(t, testLive()...)
	got, err := checker.WithControllers("kubectl-edit").Check(t.Context(), testManifest)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(got) != 1 || got[0].Object.Name != "cluster" {
		t.Errorf("drifts = %+v, want only the Namespace's label", got)
	}
}

func TestDriftCheckErrors(t *testing.T) {
	checker, client := driftFake(t, testLive()...)
	if _, err := checker.Check(t.Context(), "apiVersion: v1\nkind: ConfigMap\n"); err == nil {
		t.Error("a manifest object without a name is no error")
	}
	if _, err := checker.Check(t.Context(), "apiVersion: a/b/c\nkind: X\nmetadata: {name: x}\n"); err == nil {
		t.Error("an invalid apiVersion is no error")
	}
	boom := errors.New("boom")
	client.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, boom
	})
	_, err := checker.Check(t.Context(), testManifest)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "ConfigMap ns/edited") {
		t.Errorf("Check error = %v, want the API error naming the object", err)
	}
}

// driftApplies records the server-side applies a fake client receives and
// answers them with the applied object.
func driftApplies(client *dynamicfake.FakeDynamicClient) *[]clienttesting.PatchActionImpl {
	var applies []clienttesting.PatchActionImpl
	client.PrependReactor("patch", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patch, ok := action.(clienttesting.PatchActionImpl)
		if !ok {
			return false, nil, nil
		}
		applies = append(applies, patch)
		return true, &unstructured.Unstructured{Object: map[string]any{}}, nil
	})
	return &applies
}

func TestDriftRevert(t *testing.T) {
	checker, client := driftFake(t, testLive()...)
	applies := driftApplies(client)
	drifts := []Drift{
		testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}, []any{"data", "key"}),
		testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "missing"}, []any{"data", "key"}),
		{Object: Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "same"}},
		{Object: Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}, Fields: []string{".data.other"}},
	}
	if err := checker.Revert(t.Context(), testManifest, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if len(*applies) != 1 {
		t.Fatalf("applies = %d, want 1 (the missing object is skipped, no paths is nothing to do)", len(*applies))
	}
	apply := (*applies)[0]
	opts := apply.GetPatchOptions()
	if apply.GetName() != "edited" || apply.GetNamespace() != "ns" || opts.FieldManager != FieldManager ||
		opts.Force == nil || !*opts.Force {
		t.Errorf("apply of %s/%s with %+v, want ns/edited by %s with force", apply.GetNamespace(), apply.GetName(), opts, FieldManager)
	}
	body := testObject(t, string(apply.GetPatch()))
	want := testObject(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: edited, namespace: ns, uid: u-1, resourceVersion: "7"},
		data: {key: v}}`)
	if d := cmp.Diff(want, body); d != "" {
		t.Errorf("applied object (-want +got):\n%s", d)
	}
}

func TestDriftRevertErrors(t *testing.T) {
	checker, client := driftFake(t, testLive()...)
	applies := driftApplies(client)
	drifts := []Drift{
		testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "notinmanifest"}, []any{"data", "key"}),
		testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}, []any{"data", "nope"}),
		testDrift(Object{APIVersion: "v1", Kind: "Namespace", Name: "cluster"}, []any{"metadata", "labels", "team"}),
	}
	err := checker.Revert(t.Context(), testManifest, drifts)
	for _, name := range []string{"ns/notinmanifest", "ns/edited"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Revert error = %v, want one naming %s", err, name)
		}
	}
	if len(*applies) != 1 || (*applies)[0].GetName() != "cluster" {
		t.Errorf("applies = %+v, want the Namespace's despite the other failures", *applies)
	}

	client.PrependReactor("get", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "namespaces"}, "cluster", errors.New("again"))
	})
	if err := checker.Revert(t.Context(), testManifest, drifts[2:]); !apierrors.IsConflict(err) {
		t.Errorf("Revert error = %v, want the last Conflict after retries", err)
	}
}

func TestDriftCheckSeen(t *testing.T) {
	checker, _ := driftFake(t, testLive()...)
	_, seen, err := checker.CheckSeen(t.Context(), testManifest)
	if err != nil {
		t.Fatalf("CheckSeen: %v", err)
	}
	edited := Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}
	if seen[edited] != "7" {
		t.Errorf("seen = %v, want the edited ConfigMap at resourceVersion 7", seen)
	}
	if _, ok := seen[Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "missing"}]; ok {
		t.Error("a missing object was seen")
	}
}

// An object the server refuses to apply as a dry run is skipped; the
// others are still checked.
func TestDriftCheckSkipsRefusedDryRuns(t *testing.T) {
	checker, client := driftFake(t, testLive()...)
	client.PrependReactor("patch", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewBadRequest("admission webhook does not support dry run")
	})
	got, err := checker.Check(t.Context(), testManifest)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := []Drift{testDrift(Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "edited"}, []any{"data", "key"})}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("drifts (-want +got):\n%s", d)
	}
}
