package kube

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/hook/operation"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/patch"
)

// patchEnv is a Patcher on the local control plane and a namespace of the
// test's own.
type patchEnv struct {
	patcher *patch.Patcher
	dyn     dynamic.Interface
	ns      string
}

func patchSetup(t *testing.T) patchEnv {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	// Tests install CRDs and use their kinds at once: a short fresh window
	// makes the first miss after the install read discovery again, as the
	// operator's explicit refresh after applying CRDs does.
	kinds := kube.NewDiscovery(cp.Clientset(t).Discovery(), 10*time.Millisecond, nil).Resolver()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	return patchEnv{patcher: patch.NewPatcher(dyn, kinds, log), dyn: dyn, ns: cp.Namespace(t)}
}

// apply parses ops, with every "NS" replaced by the test's namespace, and
// applies them.
func (e patchEnv) apply(ctx context.Context, t *testing.T, ops string) error {
	t.Helper()
	parsed, err := operation.Parse([]byte(strings.ReplaceAll(ops, "NS", e.ns)))
	if err != nil {
		t.Fatalf("ParseOperations: %v", err)
	}
	return e.patcher.Apply(ctx, parsed)
}

func (e patchEnv) configMaps() dynamic.ResourceInterface {
	return e.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(e.ns)
}

// get returns the object, or nil when it does not exist.
func patchGet(t *testing.T, res dynamic.ResourceInterface, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := res.Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return obj
}

// patchData is the data of a ConfigMap, or nil when it does not exist.
func patchData(t *testing.T, e patchEnv, name string) map[string]any {
	t.Helper()
	obj := patchGet(t, e.configMaps(), name)
	if obj == nil {
		return nil
	}
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	return data
}

// patchStep is one Apply in a sequence sharing a namespace.
type patchStep struct {
	name string
	ops  string
	err  func(error) bool // nil: Apply must succeed
	want map[string]map[string]any
}

func patchRunSteps(t *testing.T, e patchEnv, steps []patchStep) {
	t.Helper()
	for _, step := range steps {
		err := e.apply(t.Context(), t, step.ops)
		if (step.err == nil && err != nil) || (step.err != nil && !step.err(err)) {
			t.Fatalf("%s: Apply error = %v", step.name, err)
		}
		for name, want := range step.want {
			if diff := cmp.Diff(want, patchData(t, e, name)); diff != "" {
				t.Errorf("%s: data of %s (-want +got):\n%s", step.name, name, diff)
			}
		}
	}
}

func patchCM(name, data string) string {
	return "object: {apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + ", namespace: NS}, data: " + data + "}\n"
}

func TestPatchCreateOperations(t *testing.T) {
	e := patchSetup(t)
	patchRunSteps(t, e, []patchStep{
		{name: "Create creates", ops: "operation: Create\n" + patchCM("a", "{k: one}"),
			want: map[string]map[string]any{"a": {"k": "one"}}},
		{name: "Create fails on an existing object", ops: "operation: Create\n" + patchCM("a", "{k: two}"),
			err: apierrors.IsAlreadyExists, want: map[string]map[string]any{"a": {"k": "one"}}},
		{name: "CreateIfNotExists keeps an existing object", ops: "operation: CreateIfNotExists\n" + patchCM("a", "{k: two}"),
			want: map[string]map[string]any{"a": {"k": "one"}}},
		{name: "CreateIfNotExists creates", ops: "operation: CreateIfNotExists\n" + patchCM("b", "{k: b}"),
			want: map[string]map[string]any{"b": {"k": "b"}}},
		{name: "CreateOrUpdate creates", ops: "operation: CreateOrUpdate\n" + patchCM("c", "{k: c}"),
			want: map[string]map[string]any{"c": {"k": "c"}}},
		{name: "CreateOrUpdate replaces", ops: "operation: CreateOrUpdate\n" + patchCM("a", "{other: three}"),
			want: map[string]map[string]any{"a": {"other": "three"}}},
		{name: "CreateOrUpdate ignores a stale resourceVersion from the hook",
			ops:  "operation: CreateOrUpdate\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: NS, resourceVersion: \"1\"}, data: {k: four}}\n",
			want: map[string]map[string]any{"a": {"k": "four"}}},
		{name: "a failure stops the rest", ops: "operation: Create\n" + patchCM("a", "{k: five}") + "---\noperation: Create\n" + patchCM("d", "{k: d}"),
			err: apierrors.IsAlreadyExists, want: map[string]map[string]any{"a": {"k": "four"}, "d": nil}},
	})
}

func TestPatchCreateWithGenerateName(t *testing.T) {
	e := patchSetup(t)
	ops := "operation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {generateName: gen-, namespace: NS}}\n"
	for range 2 {
		if err := e.apply(t.Context(), t, ops); err != nil {
			t.Fatalf("Apply: %v", err)
		}
	}
	list, err := e.configMaps().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	generated := 0
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.GetName(), "gen-") {
			generated++
		}
	}
	if generated != 2 {
		t.Errorf("%d ConfigMaps named gen-*, want 2", generated)
	}
}

// Without a garbage collector (no kube-controller-manager runs here) the
// API server keeps an object deleted with orphan propagation, holding the
// "orphan" finalizer the collector would remove: that finalizer proves the
// propagation policy.
func TestPatchDeleteInBackgroundAndNonCascading(t *testing.T) {
	tests := []struct {
		op        string
		finalizer string // "": deleted at once
	}{
		{"DeleteInBackground", ""},
		{"DeleteNonCascading", metav1.FinalizerOrphanDependents},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			e := patchSetup(t)
			del := "operation: " + tc.op + "\nkind: ConfigMap\nnamespace: NS\nname: a\n"
			if err := e.apply(t.Context(), t, "operation: Create\n"+patchCM("a", "{k: v}")+"---\n"+del); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			obj := patchGet(t, e.configMaps(), "a")
			switch {
			case tc.finalizer == "" && obj != nil:
				t.Errorf("object still exists: %v", obj.Object)
			case tc.finalizer != "" && (obj == nil || obj.GetDeletionTimestamp() == nil || !cmp.Equal(obj.GetFinalizers(), []string{tc.finalizer})):
				t.Errorf("object = %v, want it terminating with finalizer %s", obj, tc.finalizer)
			}
			if err := e.apply(t.Context(), t, strings.Replace(del, "name: a", "name: missing", 1)); err != nil {
				t.Errorf("deleting a missing object: %v", err)
			}
		})
	}
}

// TestPatchDeleteWaitsForForegroundDeletion plays the garbage collector: it
// removes the foregroundDeletion finalizer, and only then may Delete return.
func TestPatchDeleteWaitsForForegroundDeletion(t *testing.T) {
	e := patchSetup(t)
	if err := e.apply(t.Context(), t, "operation: Create\n"+patchCM("a", "{k: v}")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	w, err := e.configMaps().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=a"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	del, err := operation.Parse([]byte("operation: Delete\nkind: ConfigMap\nnamespace: " + e.ns + "\nname: a\n"))
	if err != nil {
		t.Fatalf("ParseOperations: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- e.patcher.Apply(t.Context(), del) }()

	patchAwaitTerminating(t, w.ResultChan(), metav1.FinalizerDeleteDependents)
	select {
	case err := <-done:
		t.Fatalf("Delete returned before the object was gone: %v", err)
	default:
	}
	if _, err := e.configMaps().Patch(t.Context(), "a", types.MergePatchType, patchNoFinalizers(), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove finalizers: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Delete did not return after the object was gone")
	}
}

func TestPatchDeleteGivesUpWithTheContext(t *testing.T) {
	e := patchSetup(t)
	create := "operation: Create\nobject: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: NS, finalizers: [example.com/keep]}}\n"
	if err := e.apply(t.Context(), t, create); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	err := e.apply(ctx, t, "operation: Delete\nkind: ConfigMap\nnamespace: NS\nname: a\n")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Apply error = %v, want the context's deadline", err)
	}
	if _, err := e.configMaps().Patch(t.Context(), "a", types.MergePatchType, patchNoFinalizers(), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove finalizers: %v", err)
	}
}

func patchNoFinalizers() []byte { return []byte(`{"metadata":{"finalizers":null}}`) }

// patchAwaitTerminating reads watch events until the object is being deleted
// and holds finalizer.
func patchAwaitTerminating(t *testing.T, events <-chan watch.Event, finalizer string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("watch ended")
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if isObj && obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), finalizer) {
				return
			}
		case <-deadline:
			t.Fatalf("object not terminating with finalizer %s", finalizer)
		}
	}
}
