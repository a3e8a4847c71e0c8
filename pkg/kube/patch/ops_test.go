package patch

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/hook/operation"
)

// patchConflicts makes the first n updates of ConfigMaps fail with a
// Conflict and returns a counter of all update attempts.
func patchConflicts(client *dynamicfake.FakeDynamicClient, n int) *int {
	attempts := 0
	client.PrependReactor("update", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		attempts++
		if attempts <= n {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("modified"))
		}
		return false, nil, nil
	})
	return &attempts
}

func TestPatcherRetriesOnConflict(t *testing.T) {
	tests := []struct {
		name         string
		ops          string
		conflicts    int
		wantAttempts int
		wantData     map[string]any
		wantConflict bool
	}{
		{"CreateOrUpdate", "operation: CreateOrUpdate\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, data: {k: v}}\n",
			2, 3, map[string]any{"k": "v"}, false},
		{"JQPatch", "operation: JQPatch\napiVersion: v1\nkind: ConfigMap\nnamespace: ns\nname: a\njqFilter: .data.k = \"v\"\n",
			1, 2, map[string]any{"old": "1", "k": "v"}, false},
		{"JQPatch gives up", "operation: JQPatch\napiVersion: v1\nkind: ConfigMap\nnamespace: ns\nname: a\njqFilter: .data.k = \"v\"\n",
			100, 4, map[string]any{"old": "1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, client := patchFake(t, configMap(map[string]any{"old": "1"}))
			attempts := patchConflicts(client, tc.conflicts)
			err := p.Apply(t.Context(), mustParse(t, tc.ops))
			if tc.wantConflict != apierrors.IsConflict(err) || (!tc.wantConflict && err != nil) {
				t.Fatalf("Apply error = %v, want a conflict: %v", err, tc.wantConflict)
			}
			if *attempts != tc.wantAttempts {
				t.Errorf("%d update attempts, want %d", *attempts, tc.wantAttempts)
			}
			if diff := cmp.Diff(tc.wantData, patchData(t, client, "a")); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPatcherCreateOrUpdateOfADeletedObject: the object exists at Create
// and is deleted by someone else before the Update; CreateOrUpdate creates
// it again instead of failing with NotFound.
func TestPatcherCreateOrUpdateOfADeletedObject(t *testing.T) {
	p, client := patchFake(t, configMap(map[string]any{"old": "1"}))
	deleted := false
	client.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		if deleted {
			return false, nil, nil
		}
		deleted = true
		err := client.Tracker().Delete(configMapsGVR(), "ns", "a")
		return true, nil, errors.Join(err, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "a"))
	})
	ops := mustParse(t, "operation: CreateOrUpdate\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, data: {k: v}}\n")
	if err := p.Apply(t.Context(), ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if !deleted {
		t.Fatal("the object was never deleted between Create and Update")
	}
	if diff := cmp.Diff(map[string]any{"k": "v"}, patchData(t, client, "a")); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestPatcherJQPatchWithoutChangeDoesNotUpdate(t *testing.T) {
	p, client := patchFake(t, configMap(map[string]any{"k": "v"}))
	ops := mustParse(t, "operation: JQPatch\nkind: ConfigMap\nnamespace: ns\nname: a\njqFilter: .data.k = \"v\"\n")
	if err := p.Apply(t.Context(), ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" {
			t.Errorf("unexpected %s of %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestPatcherWritesSubresources checks the requests; that the API server
// stores status only through them is covered by the e2e tests.
func TestPatcherWritesSubresources(t *testing.T) {
	const coords = "apiVersion: v1\nkind: ConfigMap\nnamespace: ns\nname: a\nsubresource: status\n"
	tests := []struct {
		name   string
		exists bool
		ops    string
		want   []string // verb/subresource of each write
	}{
		{"MergePatch", true, "operation: MergePatch\nmergePatch: {status: {ok: true}}\n" + coords, []string{"patch/status"}},
		{"JSONPatch", true, "operation: JSONPatch\njsonPatch: [{op: add, path: /status, value: {}}]\n" + coords, []string{"patch/status"}},
		{"JQPatch", true, "operation: JQPatch\njqFilter: .status.ok = true\n" + coords, []string{"update/status"}},
		{"CreateOrUpdate of a new object", false,
			"operation: CreateOrUpdate\nsubresource: status\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, status: {ok: true}}\n",
			[]string{"create/", "update/status"}},
		{"CreateOrUpdate of an existing object", true,
			"operation: CreateOrUpdate\nsubresource: status\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, status: {ok: true}}\n",
			[]string{"create/", "update/", "update/status"}},
		{"CreateIfNotExists of an existing object", true,
			"operation: CreateIfNotExists\nsubresource: status\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}, status: {ok: true}}\n",
			[]string{"create/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var existing []*unstructured.Unstructured
			if tc.exists {
				existing = append(existing, configMap(nil))
			}
			p, client := patchFake(t, existing...)
			if err := p.Apply(t.Context(), mustParse(t, tc.ops)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			var writes []string
			for _, a := range client.Actions() {
				if verb := a.GetVerb(); verb != "get" && verb != "list" && verb != "watch" {
					writes = append(writes, verb+"/"+a.GetSubresource())
				}
			}
			if diff := cmp.Diff(tc.want, writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatcherIgnoresNamespaceOfClusterScopedKinds(t *testing.T) {
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"},
	}}
	p, client := patchFake(t, ns)
	ops := []operation.Operation{{Type: operation.MergePatch, Kind: "Namespace", Namespace: "ns", Name: "x", MergePatch: []byte(`{"metadata":{"labels":{"a":"b"}}}`)}}
	if err := p.Apply(t.Context(), ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	got, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(t.Context(), "x", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"a": "b"}, got.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestPatchIsMissing(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the object", apierrors.NewNotFound(gr, "a"), true},
		{"wrapped", errors.Join(errors.New("context"), apierrors.NewNotFound(gr, "a")), true},
		{"another object", apierrors.NewNotFound(gr, "b"), false},
		{"no such subresource", apierrors.NewGenericServerResponse(404, "patch", gr, "", "", 0, false), false},
		{"other error", apierrors.NewConflict(gr, "a", errors.New("x")), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isMissing(tc.err, "a"); got != tc.want {
				t.Errorf("isMissing = %v, want %v", got, tc.want)
			}
		})
	}
}
