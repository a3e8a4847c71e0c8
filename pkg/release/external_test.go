package release

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
	"github.com/addon-operator/addon-operator/pkg/release/weights"
)

// externalsCreator is a memoryCreator that also looks at external
// dependencies: those in ready are ready, those in unknown have a type
// no kind matches; awaiting makes every dependency ready.
type externalsCreator struct {
	*memoryCreator
	ready   map[string]bool
	unknown map[string]bool
}

func (c *externalsCreator) CheckExternal(_ context.Context, d weights.External) (weights.ExternalState, error) {
	if c.unknown[d.Type] {
		return weights.ExternalState{}, &weights.ExternalError{Dependency: d, Err: errors.New("no matches")}
	}
	return weights.ExternalState{Dependency: d, Exists: c.ready[d.Type+"/"+d.Name], Ready: c.ready[d.Type+"/"+d.Name]}, nil
}

func (c *externalsCreator) AwaitExternal(_ context.Context, deps []weights.External, _ time.Duration, seen func(weights.ExternalState)) error {
	names := make([]string, 0, len(deps))
	for _, d := range deps {
		seen(weights.ExternalState{Dependency: d, Kind: "Secret", Namespace: d.Namespace})
		names = append(names, d.Type+"/"+d.Name+" in "+d.Namespace)
		c.ready[d.Type+"/"+d.Name] = true
	}
	c.log.steps = append(c.log.steps, "await "+strings.Join(names, ","))
	return nil
}

// externalManifest has a Deployment of weight -10 that needs the Secret
// db outside the release, a ConfigMap free, and a ConfigMap app of the
// default weight that needs the Deployment web of namespace front.
const externalManifest = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  annotations:
    werf.io/weight: "-10"
    creds.external-dependency.werf.io/resource: secret/db
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: free
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    web.external-dependency.werf.io/resource: deployments.v1.apps/web
    web.external-dependency.werf.io/namespace: front
`

// An object with external dependencies is created only once they are
// ready: the Deployment db before its weight's group is created, the
// ConfigMap app (of the highest group) before Helm applies the release;
// each wait parks the module and ends with ErrNextWeight, and progress
// hears what it waits for. Once the objects exist, an upgrade waits for
// nothing.
func TestDeployAwaitsExternalDependencies(t *testing.T) {
	l := &log{}
	creator := &externalsCreator{memoryCreator: &memoryCreator{exists: map[string]bool{}, log: l}, ready: map[string]bool{}}
	rels := &aheadReleases{manifest: externalManifest, log: l, created: creator.memoryCreator}
	var progress []string
	r := New(Options{Releases: rels, Weights: creator, Readiness: loggedReadiness{log: l}, Namespace: "ext-ns", Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler),
		Progress: func(_ string, p readiness.Pending) { progress = append(progress, p.Object.String()+": "+p.Message) }})

	deployUntilDone(t, r, "ext")
	want := []string{
		"await secret/db in ext-ns",
		"create Deployment/db of ext",
		"ready Deployment/db",
		"await deployments.v1.apps/web in front",
		"helm",
		"ready Deployment/db,ConfigMap/free,ConfigMap/app",
	}
	if diff := cmp.Diff(want, l.steps); diff != "" {
		t.Errorf("install (-want +got):\n%s", diff)
	}
	wantProgress := []string{
		"Secret ext-ns/db: external dependency of Deployment db: absent",
		"Secret front/web: external dependency of ConfigMap app: absent",
	}
	if diff := cmp.Diff(wantProgress, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}

	l.steps = nil
	creator.ready = map[string]bool{}
	deployUntilDone(t, r, "ext")
	if diff := cmp.Diff([]string{"helm", "ready Deployment/db,ConfigMap/free,ConfigMap/app"}, l.steps); diff != "" {
		t.Errorf("upgrade with every object in place (-want +got):\n%s", diff)
	}
}

// A dependency whose type resolves to no kind fails the deploy at once,
// naming it, and creates nothing; an invalid annotation fails naming the
// object and the annotation.
func TestDeployExternalDependencyRefused(t *testing.T) {
	l := &log{}
	creator := &externalsCreator{memoryCreator: &memoryCreator{exists: map[string]bool{}, log: l}, ready: map[string]bool{}, unknown: map[string]bool{"secret": true}}
	rels := &aheadReleases{manifest: externalManifest, log: l, created: creator.memoryCreator}
	r := New(Options{Releases: rels, Weights: creator, Namespace: "ext-ns", Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
	_, wait, err := r.Deploy(t.Context(), testModule(t, "ext"), nil)
	var unawaitable *weights.ExternalError
	if !errors.As(err, &unawaitable) || wait != nil || !strings.Contains(err.Error(), "external dependency secret/db in namespace ext-ns (annotation creds.external-dependency.werf.io/resource of Deployment db): no matches") {
		t.Errorf("deploy: wait %v, error %v; want an *ExternalError naming the dependency", wait != nil, err)
	}
	if len(l.steps) != 0 {
		t.Errorf("steps %q, want nothing created", l.steps)
	}

	rels.manifest = strings.Replace(externalManifest, "secret/db", "secret", 1)
	_, _, err = r.Deploy(t.Context(), testModule(t, "ext"), nil)
	var invalid *weights.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `Deployment db: annotation creds.external-dependency.werf.io/resource: "secret": not <type>`) {
		t.Errorf("deploy with an invalid annotation: %v", err)
	}
}
