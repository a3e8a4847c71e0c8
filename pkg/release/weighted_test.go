package release

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
)

// weightedManifest has a Deployment of weight -10, a ConfigMap of weight
// -5 (ready once it exists) and a Deployment of the default weight 0.
const weightedManifest = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  annotations: {werf.io/weight: "-10"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations: {werf.io/weight: "-5"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
`

// log records, in order, what the fakes below were asked to do.
type log struct{ steps []string }

// aheadReleases runs Release.Ahead on a fixed manifest, as helm.Client
// does, and records Helm's operation unless Ahead defers it.
type aheadReleases struct {
	fakeReleases
	manifest string
	log      *log
	revision int
	// created hears the objects Helm's operation makes exist.
	created *memoryCreator
}

func (f *aheadReleases) Apply(ctx context.Context, r helm.Release) (helm.Outcome, error) {
	if r.Ahead != nil {
		_, deferred, err := r.Ahead(ctx, f.manifest)
		if err != nil {
			return helm.Outcome{}, err
		}
		if deferred {
			return helm.Outcome{Deferred: true}, nil
		}
	}
	f.revision++
	f.log.steps = append(f.log.steps, "helm")
	objs, err := kube.ManifestObjects(f.manifest)
	if err != nil {
		return helm.Outcome{}, err
	}
	for _, obj := range objs {
		f.created.exists[key(obj)] = true
	}
	return helm.Outcome{Revision: f.revision, Reason: helm.ReasonChecksumChanged, Manifest: f.manifest}, nil
}

// memoryCreator keeps which objects exist, by kind and name.
type memoryCreator struct {
	exists  map[string]bool
	foreign map[string]bool
	log     *log
}

func key(obj map[string]any) string {
	u := unstructured.Unstructured{Object: obj}
	return u.GetKind() + "/" + u.GetName()
}

func (c *memoryCreator) CreateMissing(_ context.Context, owner weights.Owner, objs []map[string]any) (weights.Created, error) {
	var out weights.Created
	for _, obj := range objs {
		if c.foreign[key(obj)] {
			out.Foreign = append(out.Foreign, key(obj))
		}
		if c.exists[key(obj)] {
			continue
		}
		c.exists[key(obj)] = true
		c.log.steps = append(c.log.steps, "create "+key(obj)+" of "+owner.Release)
		out.Count++
	}
	return out, nil
}

func (c *memoryCreator) AnyMissing(_ context.Context, _ weights.Owner, objs []map[string]any) (bool, error) {
	for _, obj := range objs {
		if !c.exists[key(obj)] {
			return true, nil
		}
	}
	return false, nil
}

// loggedReadiness records each wait and the objects it is for.
type loggedReadiness struct{ log *log }

func (r loggedReadiness) Wait(_ context.Context, _ string, objects []readiness.Object, _ time.Duration, _ <-chan struct{}, _ func(readiness.Pending)) error {
	var names []string
	for _, o := range objects {
		if !o.ReadyAsCreated {
			names = append(names, o.Kind+"/"+o.Name)
		}
	}
	r.log.steps = append(r.log.steps, "ready "+strings.Join(names, ","))
	return nil
}

// deployUntilDone deploys like a module run does: a wait that ends with
// ErrNextWeight deploys again.
func deployUntilDone(t *testing.T, r *Manager, name string) {
	t.Helper()
	m := testModule(t, name)
	for range 10 {
		_, wait, err := r.Deploy(t.Context(), m, nil)
		if err != nil {
			t.Fatalf("deploy: %v", err)
		}
		if wait == nil {
			return
		}
		if err := wait(t.Context()); !errors.Is(err, ErrNextWeight) {
			return
		}
	}
	t.Fatal("deploy did not end in 10 rounds")
}

// A release of several weights is created in ascending groups: each
// group that must become ready is awaited, with no worker held, before
// the next is created; objects ready once created (the ConfigMap) are
// not awaited; Helm applies the whole release last. Once every object
// exists, an upgrade is Helm's alone.
func TestDeployCreatesLowerWeightsFirst(t *testing.T) {
	l := &log{}
	creator := &memoryCreator{exists: map[string]bool{}, log: l}
	rels := &aheadReleases{manifest: weightedManifest, log: l, created: creator}
	r := New(Options{Releases: rels, Weights: creator, Readiness: loggedReadiness{log: l}, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})

	deployUntilDone(t, r, "weighted")
	want := []string{
		"create Deployment/db of weighted",
		"ready Deployment/db",
		"create ConfigMap/settings of weighted",
		"helm",
		"ready Deployment/db,ConfigMap/settings,Deployment/app",
	}
	if diff := cmp.Diff(want, l.steps); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}

	l.steps = nil
	deployUntilDone(t, r, "weighted")
	if diff := cmp.Diff([]string{"helm", "ready Deployment/db,ConfigMap/settings,Deployment/app"}, l.steps); diff != "" {
		t.Errorf("upgrade with every object in place (-want +got):\n%s", diff)
	}

	// A new object of a low weight, added by an upgrade, is created and
	// awaited before the new object of weight 0.
	l.steps = nil
	rels.manifest = weightedManifest + `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cache
  annotations: {werf.io/weight: "-10"}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec: {type: LoadBalancer}
`
	deployUntilDone(t, r, "weighted")
	want = []string{
		"create Deployment/cache of weighted",
		"ready Deployment/db,Deployment/cache",
		"helm",
		"ready Deployment/db,ConfigMap/settings,Deployment/app,Deployment/cache,Service/web",
	}
	if diff := cmp.Diff(want, l.steps); diff != "" {
		t.Errorf("upgrade adding a weighted object (-want +got):\n%s", diff)
	}
}

// A release of one weight creates nothing ahead, and one whose weight is
// not an integer fails naming the object and the annotation.
func TestDeployWeightsRefused(t *testing.T) {
	l := &log{}
	creator := &memoryCreator{exists: map[string]bool{}, log: l}
	one := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {werf.io/weight: \"3\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {werf.io/weight: \"3\"}\n"
	rels := &aheadReleases{manifest: one, log: l, created: creator}
	r := New(Options{Releases: rels, Weights: creator, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
	deployUntilDone(t, r, "one")
	if diff := cmp.Diff([]string{"helm"}, l.steps); diff != "" {
		t.Errorf("one weight (-want +got):\n%s", diff)
	}

	// An object of a lower weight that exists and is not the release's is
	// not waited for: Helm's ownership check decides at once.
	l.steps = nil
	creator.exists = map[string]bool{"Deployment/db": true}
	creator.foreign = map[string]bool{"Deployment/db": true}
	rels.manifest = weightedManifest
	r = New(Options{Releases: rels, Weights: creator, Readiness: loggedReadiness{log: l}, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
	deployUntilDone(t, r, "foreign")
	if diff := cmp.Diff([]string{"helm", "ready Deployment/db,ConfigMap/settings,Deployment/app"}, l.steps); diff != "" {
		t.Errorf("foreign object of a lower weight (-want +got):\n%s", diff)
	}

	rels.manifest = strings.Replace(weightedManifest, `"-5"`, `"early"`, 1)
	_, _, err := r.Deploy(t.Context(), testModule(t, "bad"), nil)
	var invalid *weights.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `ConfigMap settings: annotation werf.io/weight: "early" is not an integer`) {
		t.Errorf("deploy with weight %q: error %v, want one naming the ConfigMap and the annotation", "early", err)
	}
}
