package kube

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
)

// driftEnv is a drift.Checker on the local control plane, looking for
// objects without a namespace in a namespace of the test's own.
type driftEnv struct {
	checker *drift.Checker
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	ns      string
}

func driftSetup(t *testing.T) driftEnv {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	disc := kube.NewDiscovery(cp.Clientset(t).Discovery(), 0, nil)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ns := cp.Namespace(t)
	return driftEnv{checker: drift.NewChecker(dyn, disc.Resolver(), log).WithNamespace(ns), dyn: dyn, mapper: disc.RESTMapper(), ns: ns}
}

// resource returns the client of the kind of the YAML object doc, and the
// object.
func (e driftEnv) resource(t *testing.T, doc string) (dynamic.ResourceInterface, *unstructured.Unstructured) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := utilyaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	gvk := obj.GroupVersionKind()
	mapping, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("resolve %s: %v", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return e.dyn.Resource(mapping.Resource), obj
	}
	obj.SetNamespace(e.ns)
	return e.dyn.Resource(mapping.Resource).Namespace(e.ns), obj
}

// install creates the objects of manifest as Helm does, with field manager
// helm.
func (e driftEnv) install(t *testing.T, manifest string) {
	t.Helper()
	for doc := range strings.SplitSeq(manifest, "\n---\n") {
		res, obj := e.resource(t, doc)
		if _, err := res.Create(t.Context(), obj, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// change merge-patches the object name, of the kind of the YAML object
// kindDoc, as field manager, through subresource when one is given.
func (e driftEnv) change(t *testing.T, kindDoc, name, manager, patch string, subresource ...string) {
	t.Helper()
	res, _ := e.resource(t, kindDoc)
	_, err := res.Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager}, subresource...)
	if err != nil {
		t.Fatalf("patch %s by %s: %v", name, manager, err)
	}
}

// expect runs Check and compares the drifted fields by object name.
func (e driftEnv) expect(t *testing.T, step, manifest string, want map[string][]string) {
	t.Helper()
	drifts, err := e.checker.Check(t.Context(), manifest)
	if err != nil {
		t.Fatalf("%s: Check: %v", step, err)
	}
	got := map[string][]string{}
	for _, d := range drifts {
		got[d.Object.Name] = d.Fields
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: drifted fields (-want +got):\n%s", step, d)
	}
}

// get returns the live object's field at path.
func (e driftEnv) get(t *testing.T, kindDoc, name string, path ...string) any {
	t.Helper()
	res, _ := e.resource(t, kindDoc)
	obj, err := res.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	value, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
	return value
}

const driftConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, labels: {app.kubernetes.io/name: settings}}
data: {key: v, other: o}`

func TestDriftConfigMapEditedByAPerson(t *testing.T) {
	e := driftSetup(t)
	e.install(t, driftConfigMap)
	e.expect(t, "as installed", driftConfigMap, map[string][]string{})

	e.change(t, driftConfigMap, "settings", "kubectl-edit", `{"data":{"extra":"x"},"metadata":{"labels":{"added":"y"}}}`)
	e.expect(t, "fields the manifest does not set", driftConfigMap, map[string][]string{})

	e.change(t, driftConfigMap, "settings", "kubectl-edit", `{"data":{"key":"edited"}}`)
	e.change(t, driftConfigMap, "settings", "kubectl-client-side-apply", `{"metadata":{"labels":{"app.kubernetes.io/name":"x"}}}`)
	want := map[string][]string{"settings": {".data.key", ".metadata.labels.app.kubernetes.io/name"}}
	e.expect(t, "edited", driftConfigMap, want)

	drifts, err := e.checker.Check(t.Context(), driftConfigMap)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.checker.Revert(t.Context(), driftConfigMap, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	e.expect(t, "reverted", driftConfigMap, map[string][]string{})
	wantData := map[string]any{"key": "v", "other": "o", "extra": "x"}
	if d := cmp.Diff(wantData, e.get(t, driftConfigMap, "settings", "data")); d != "" {
		t.Errorf("data after Revert (-want +got):\n%s", d)
	}
	if got := e.get(t, driftConfigMap, "settings", "metadata", "labels", "added"); got != "y" {
		t.Errorf("label added by another party = %v after Revert, want it kept", got)
	}

	res, _ := e.resource(t, driftConfigMap)
	if err := res.Delete(t.Context(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect(t, "missing", driftConfigMap, map[string][]string{})
	if err := e.checker.Revert(t.Context(), driftConfigMap, drifts); err != nil {
		t.Fatalf("Revert of a missing object: %v", err)
	}
	if _, err := res.Get(t.Context(), "settings", metav1.GetOptions{}); err == nil {
		t.Error("Revert created a missing object; healing owns that")
	}
}

const driftDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, creationTimestamp: null}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        args: []
        env: [{name: EMPTY, value: ""}, {name: MODE, value: prod}]
        resources: {limits: {cpu: 1, memory: 1024Mi}, requests: {cpu: "0.5", memory: 128M}}
        ports: [{containerPort: 80, name: http}]`

func TestDriftDeploymentScaledByAnAutoscaler(t *testing.T) {
	e := driftSetup(t)
	e.install(t, driftDeployment)
	e.expect(t, "as installed, defaulted and canonicalised", driftDeployment, map[string][]string{})

	e.change(t, driftDeployment, "web", "horizontal-pod-autoscaler", `{"spec":{"replicas":3}}`, "scale")
	e.change(t, driftDeployment, "web", "kube-controller-manager", `{"status":{"replicas":3,"observedGeneration":9}}`, "status")
	e.expect(t, "scaled by the autoscaler", driftDeployment, map[string][]string{})
	if got := e.get(t, driftDeployment, "web", "spec", "replicas"); got != int64(3) {
		t.Fatalf("replicas = %v after scaling, want 3; the test proves nothing", got)
	}

	e.change(t, driftDeployment, "web", "kubectl-edit",
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:evil","args":[],"env":[{"name":"EMPTY"},{"name":"MODE","value":"prod"}],"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m","memory":"128M"}},"ports":[{"containerPort":80,"name":"http"}]}]}}}}`)
	e.expect(t, "image edited", driftDeployment, map[string][]string{"web": {`.spec.template.spec.containers[name="app"].image`}})
	e.change(t, driftDeployment, "web", "kubectl-scale", `{"spec":{"replicas":5}}`, "scale")
	want := map[string][]string{"web": {".spec.replicas", `.spec.template.spec.containers[name="app"].image`}}
	e.expect(t, "scaled by a person", driftDeployment, want)

	drifts, err := e.checker.Check(t.Context(), driftDeployment)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.checker.Revert(t.Context(), driftDeployment, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	e.expect(t, "reverted", driftDeployment, map[string][]string{})
	if got := e.get(t, driftDeployment, "web", "spec", "replicas"); got != int64(1) {
		t.Errorf("replicas = %v after Revert, want 1", got)
	}
}

// driftOpaque is a Secret written with stringData, which the server stores
// base64-encoded in data.
const driftOpaque = `apiVersion: v1
kind: Secret
metadata: {name: opaque}
stringData: {note: plain}`

const driftWebhook = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: NAME}
webhooks:
- name: drift.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://drift.example.com/mutate", caBundle: Zmlyc3Q=}`

func TestDriftSecretAndInjectedCABundle(t *testing.T) {
	e := driftSetup(t)
	webhook := strings.ReplaceAll(driftWebhook, "NAME", e.ns)
	manifest := driftOpaque + "\n---\n" + webhook
	e.install(t, manifest)
	t.Cleanup(func() {
		res, _ := e.resource(t, webhook)
		_ = res.Delete(context.WithoutCancel(t.Context()), e.ns, metav1.DeleteOptions{})
	})
	e.expect(t, "stringData as data", manifest, map[string][]string{})

	e.change(t, webhook, e.ns, "cainjector",
		`{"webhooks":[{"name":"drift.example.com","admissionReviewVersions":["v1"],"sideEffects":"None","clientConfig":{"url":"https://drift.example.com/mutate","caBundle":"c2Vjb25k"}}]}`)
	e.change(t, driftOpaque, "opaque", "kubectl-edit", `{"data":{"note":"Y2hhbmdlZA=="}}`)
	e.expect(t, "injected CA, edited Secret", manifest, map[string][]string{"opaque": {".data.note"}})

	drifts, err := e.checker.Check(t.Context(), manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.checker.Revert(t.Context(), manifest, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	if got := e.get(t, driftOpaque, "opaque", "data", "note"); got != "cGxhaW4=" {
		t.Errorf("note after Revert = %v, want plain in base64", got)
	}
	e.expect(t, "reverted", manifest, map[string][]string{})
}

// The resolver learns kinds whose CRDs appear later; until then an object of
// an unknown kind cannot exist and is not drift.
func TestDriftUnknownKindIsNoDrift(t *testing.T) {
	e := driftSetup(t)
	manifest := "apiVersion: drift.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 1}"
	e.expect(t, "unknown kind", manifest, map[string][]string{})
}

// driftDeletingClient deletes each namespaced object just before it is
// applied, as another party may between Revert's read and its apply.
type driftDeletingClient struct{ dynamic.Interface }

func (c driftDeletingClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return driftDeletingResource{c.Interface.Resource(gvr)}
}

type driftDeletingResource struct {
	dynamic.NamespaceableResourceInterface
}

func (r driftDeletingResource) Namespace(ns string) dynamic.ResourceInterface {
	return driftDeletingNamespaced{r.NamespaceableResourceInterface.Namespace(ns)}
}

type driftDeletingNamespaced struct{ dynamic.ResourceInterface }

func (r driftDeletingNamespaced) Apply(ctx context.Context, name string, obj *unstructured.Unstructured,
	opts metav1.ApplyOptions, subresources ...string,
) (*unstructured.Unstructured, error) {
	if err := r.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Apply(ctx, name, obj, opts, subresources...)
}

// A server-side apply creates missing objects; Revert's must not, or a
// deleted object would come back as the few drifted fields alone.
func TestDriftRevertNeverCreatesAnObject(t *testing.T) {
	e := driftSetup(t)
	e.install(t, driftConfigMap)
	e.change(t, driftConfigMap, "settings", "kubectl-edit", `{"data":{"key":"edited"}}`)
	drifts, err := e.checker.Check(t.Context(), driftConfigMap)
	if err != nil || len(drifts) != 1 {
		t.Fatalf("Check = %+v, %v; want the edited ConfigMap", drifts, err)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	deleting := drift.NewChecker(driftDeletingClient{e.dyn}, kube.NewDiscovery(cp.Clientset(t).Discovery(), 0, nil).Resolver(), log).WithNamespace(e.ns)
	if err := deleting.Revert(t.Context(), driftConfigMap, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	res, _ := e.resource(t, driftConfigMap)
	if got, err := res.Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after Revert of an object deleted meanwhile: %v, %v; want it missing", got, err)
	}
}

// driftTwoMounts mounts one volume at two paths: volumeMounts is keyed by
// mountPath, so pairing items by name would compare the wrong ones.
const driftTwoMounts = `apiVersion: apps/v1
kind: Deployment
metadata: {name: mounts}
spec:
  selector: {matchLabels: {app: mounts}}
  template:
    metadata: {labels: {app: mounts}}
    spec:
      volumes: [{name: data, emptyDir: {}}]
      containers:
      - name: app
        image: nginx:1.27
        volumeMounts:
        - {name: data, mountPath: /var/cache}
        - {name: data, mountPath: /var/log, subPath: log}`

func TestDriftOneVolumeMountedTwice(t *testing.T) {
	e := driftSetup(t)
	e.install(t, driftTwoMounts)
	e.expect(t, "as installed", driftTwoMounts, map[string][]string{})
	e.expect(t, "checked again", driftTwoMounts, map[string][]string{})

	e.change(t, driftTwoMounts, "mounts", "kubectl-edit",
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27","volumeMounts":[{"name":"data","mountPath":"/var/cache"},{"name":"data","mountPath":"/var/log","subPath":"edited"}]}]}}}}`)
	e.expect(t, "subPath edited", driftTwoMounts, map[string][]string{"mounts": {`.spec.template.spec.containers[name="app"].volumeMounts[mountPath="/var/log"].subPath`}})

	drifts, err := e.checker.Check(t.Context(), driftTwoMounts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.checker.Revert(t.Context(), driftTwoMounts, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	e.expect(t, "reverted", driftTwoMounts, map[string][]string{})
	mounts, _ := e.get(t, driftTwoMounts, "mounts", "spec", "template", "spec", "containers").([]any)
	if len(mounts) != 1 {
		t.Fatalf("containers = %v, want one", mounts)
	}
	got := mounts[0].(map[string]any)["volumeMounts"]
	want := []any{
		map[string]any{"name": "data", "mountPath": "/var/cache"},
		map[string]any{"name": "data", "mountPath": "/var/log", "subPath": "log"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("volumeMounts after Revert (-want +got):\n%s", d)
	}
}
