package helm

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/drift"
)

// driftManifest is the four objects of the benchmark's module shape.
const driftManifest = `apiVersion: v1
kind: ConfigMap
metadata: {name: four}
data: {note: x}
---
apiVersion: v1
kind: Secret
metadata: {name: four}
stringData: {note: x}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: four}
---
apiVersion: v1
kind: Service
metadata: {name: four}
spec:
  clusterIP: None
  selector: {app: four}
  ports: [{name: http, port: 80}]
`

// TestDriftCheckRequests pins the requests of drift checks without the
// heal watch (which spares reads of objects unchanged since their last
// clean check): one GET and one dry-run apply (PATCH) per object, clean or
// drifted, and one GET and one apply per drifted object to revert it.
func TestDriftCheckRequests(t *testing.T) {
	ns := cp.Namespace(t)
	log := &requestLog{}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(log.wrap)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc := kube.NewDiscovery(client.Discovery(), 0, clock.RealClock{})
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	checker := drift.NewChecker(dyn, disc.Resolver(), logger).WithNamespace(ns)

	objs, err := kube.ManifestObjects(driftManifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		u := &unstructured.Unstructured{Object: obj}
		res, err := disc.Resolver().Resolve(t.Context(), u.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(res.GVR).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
			t.Fatalf("create %s: %v", u.GetKind(), err)
		}
	}
	log.take() // discovery and the creates

	check := func(step string, wantDrifts int, want map[string]int) []drift.Drift {
		t.Helper()
		drifts, err := checker.Check(t.Context(), driftManifest)
		if err != nil {
			t.Fatalf("%s: Check: %v", step, err)
		}
		if len(drifts) != wantDrifts {
			t.Errorf("%s: drifts %+v, want %d", step, drifts, wantDrifts)
		}
		reqs := log.take()
		t.Logf("%s: %d requests:\n%s", step, len(reqs), strings.Join(reqs, "\n"))
		if d := cmp.Diff(want, perVerb(reqs)); d != "" {
			t.Errorf("%s: requests per verb and code (-want +got):\n%s", step, d)
		}
		return drifts
	}
	perObject := map[string]int{"GET 200": 4, "PATCH 200": 4}
	check("clean", 0, perObject)

	cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	if _, err := cms.Patch(t.Context(), "four", types.MergePatchType, []byte(`{"data":{"note":"edited"}}`),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	log.take()
	drifts := check("edited", 1, perObject)
	if err := checker.Revert(t.Context(), driftManifest, drifts); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	reqs := log.take()
	t.Logf("revert: %d requests:\n%s", len(reqs), strings.Join(reqs, "\n"))
	if d := cmp.Diff(map[string]int{"GET 200": 1, "PATCH 200": 1}, perVerb(reqs)); d != "" {
		t.Errorf("revert: requests per verb and code (-want +got):\n%s", d)
	}
	check("reverted", 0, perObject)
}
