package weights

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// dependent is a ConfigMap app with annotations.
func dependent(annotations string) string {
	return "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  annotations:\n" + annotations
}

// The forms nelm documents: <type>[.<version>.<group>]/<name>, with the
// namespace from <id>.external-dependency.werf.io/namespace or, as
// nelm's README names it, <id>.external-dependency.werf.io/name, else the
// release's.
func TestExternals(t *testing.T) {
	manifest := dependent(`    secret.external-dependency.werf.io/resource: secret/config
    someapp.external-dependency.werf.io/resource: deployments.v1.apps/app
    someapp.external-dependency.werf.io/namespace: someapp-production
    cert.external-dependency.werf.io/resource: certificates.v1.cert-manager.io/tls
    cert.external-dependency.werf.io/name: certs
    werf.io/weight: "1"
`) + cm("plain", "")
	deps, err := Dependents(manifest, "rel")
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 || ObjectName(deps[0].Object) != "ConfigMap app" {
		t.Fatalf("dependents %v, want ConfigMap app alone", deps)
	}
	want := []External{
		{Object: "ConfigMap app", Annotation: "cert.external-dependency.werf.io/resource", Type: "certificates.v1.cert-manager.io", Name: "tls", Namespace: "certs"},
		{Object: "ConfigMap app", Annotation: "secret.external-dependency.werf.io/resource", Type: "secret", Name: "config", Namespace: "rel"},
		{Object: "ConfigMap app", Annotation: "someapp.external-dependency.werf.io/resource", Type: "deployments.v1.apps", Name: "app", Namespace: "someapp-production"},
	}
	if diff := cmp.Diff(want, deps[0].Externals); diff != "" {
		t.Errorf("externals (-want +got):\n%s", diff)
	}
	if deps, err := Dependents(cm("a", "1")+cm("b", ""), "rel"); deps != nil || err != nil {
		t.Errorf("no external dependency: %v, %v", deps, err)
	}
}

func TestExternalsRefused(t *testing.T) {
	// The dependency is a ConfigMap: any type would do.
	const res = "x.external-dependency.werf.io/resource: "
	const ns = "\n    x.external-dependency.werf.io/namespace: "
	cases := []struct{ annotations, want string }{
		{res + "configmap", "not <type>[.<version>.<group>]/<name>"},
		{res + "configmap/a/b", "not <type>[.<version>.<group>]/<name>"},
		{res + "/a", "the resource type is empty"},
		{res + "configmap/", "the name is empty"},
		{res + "all/a", "the resource type all is not one type"},
		{res + "deployments..apps/a", "empty part between dots"},
		{"x.external-dependency.werf.io/namespace: ns", "no x.external-dependency.werf.io/resource names the dependency"},
		{res + "configmap/a" + ns + "\"\"", "the namespace is empty"},
		{res + "configmap/a" + ns + "one\n    x.external-dependency.werf.io/name: two", "names namespace"},
	}
	for _, tc := range cases {
		_, err := Dependents(dependent("    "+tc.annotations+"\n"), "rel")
		var invalid *InvalidError
		if !errors.As(err, &invalid) || invalid.Object != "ConfigMap app" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want an *InvalidError naming ConfigMap app and %q", tc.annotations, err, tc.want)
		}
	}
}

// externalCreator is a Creator over a fake API server serving Secrets,
// ConfigMaps and apps/v1 Deployments.
func externalCreator(t *testing.T, objs ...runtime.Object) (*Creator, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "secrets"}:                    "SecretList",
		{Version: "v1", Resource: "configmaps"}:                 "ConfigMapList",
		{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList",
	}, objs...)
	return NewCreator(dyn, kube.NewResolver(mapper)), dyn
}

func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// deployment is a Deployment of one replica, available or not.
func deployment(ns, name string, available bool) *unstructured.Unstructured {
	u := object("apps/v1", "Deployment", ns, name)
	u.SetGeneration(1)
	u.Object["spec"] = map[string]any{"replicas": int64(1)}
	st := map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1)}
	if available {
		st["readyReplicas"], st["availableReplicas"] = int64(1), int64(1)
		st["conditions"] = []any{map[string]any{"type": "Available", "status": "True"}}
	}
	u.Object["status"] = st
	return u
}

// Each type form resolves; a Secret is ready once it exists, a
// Deployment once kstatus computes it Current; an unknown type and an
// object the operator may not read fail with an *ExternalError.
func TestCheckExternal(t *testing.T) {
	c, dyn := externalCreator(t, object("v1", "Secret", "rel", "config"), deployment("apps", "app", false))
	cases := []struct {
		dep         External
		want        string // Object(): Seen()
		ready       bool
		unawaitable bool
	}{
		{External{Type: "secret", Name: "config", Namespace: "rel"}, "Secret rel/config: Current: Resource is always ready", true, false},
		{External{Type: "Secrets", Name: "config", Namespace: "rel"}, "Secret rel/config: Current: Resource is always ready", true, false},
		{External{Type: "secret", Name: "other", Namespace: "rel"}, "Secret rel/other: absent", false, false},
		{External{Type: "deployments.v1.apps", Name: "app", Namespace: "apps"}, "Deployment apps/app: InProgress: Available: 0/1", false, false},
		{External{Type: "deployment.apps", Name: "app", Namespace: "apps"}, "Deployment apps/app: InProgress: Available: 0/1", false, false},
		{External{Type: "widgets.v1.example.com", Name: "w", Namespace: "rel"}, "", false, true},
	}
	for _, tc := range cases {
		st, err := c.CheckExternal(t.Context(), tc.dep)
		var unawaitable *ExternalError
		if tc.unawaitable {
			if !errors.As(err, &unawaitable) || !strings.Contains(err.Error(), `resource type "widgets.v1.example.com"`) {
				t.Errorf("%s: error %v, want an *ExternalError naming the type", tc.dep.Type, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.dep.Type, err)
			continue
		}
		if got := st.Object() + ": " + st.Seen(); got != tc.want || st.Ready != tc.ready {
			t.Errorf("%s: %q ready %v, want %q ready %v", tc.dep.Type, got, st.Ready, tc.want, tc.ready)
		}
	}

	dyn.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "config", errors.New("no"))
	})
	_, err := c.CheckExternal(t.Context(), External{Type: "secret", Name: "config", Namespace: "rel", Annotation: "s.external-dependency.werf.io/resource", Object: "ConfigMap rel/app"})
	var unawaitable *ExternalError
	if !errors.As(err, &unawaitable) || !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "external dependency secret/config in namespace rel (annotation s.external-dependency.werf.io/resource of ConfigMap rel/app): read Secret rel/config") {
		t.Errorf("forbidden: %v, want an *ExternalError naming the dependency", err)
	}
}

// AwaitExternal ends once every dependency exists and is ready: here the
// Secret is created, and the Deployment becomes available, while it
// waits, each change made when the wait reports what it saw.
func TestAwaitExternal(t *testing.T) {
	c, dyn := externalCreator(t, deployment("apps", "app", false))
	secrets := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("rel")
	deployments := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("apps")
	var seen []string
	deps := []External{
		{Type: "secret", Name: "config", Namespace: "rel"},
		{Type: "deployments.v1.apps", Name: "app", Namespace: "apps"},
	}
	err := c.AwaitExternal(t.Context(), deps, time.Minute, func(st ExternalState) {
		seen = append(seen, st.Object()+": "+st.Seen())
		ctx := context.Background()
		switch st.Kind {
		case "Secret":
			if _, err := secrets.Create(ctx, object("v1", "Secret", "rel", "config"), metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
		case "Deployment":
			if _, err := deployments.UpdateStatus(ctx, deployment("apps", "app", true), metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Secret rel/config: absent", "Deployment apps/app: InProgress: Available: 0/1"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("seen (-want +got):\n%s", diff)
	}
}

// A dependency still absent when the timeout passes fails naming it and
// what was last seen; one whose type resolves to nothing fails at once,
// whatever the timeout.
func TestAwaitExternalFails(t *testing.T) {
	c, _ := externalCreator(t)
	dep := External{Object: "ConfigMap rel/app", Annotation: "db.external-dependency.werf.io/resource", Type: "secret", Name: "db", Namespace: "rel"}
	err := c.AwaitExternal(t.Context(), []External{dep}, 300*time.Millisecond, nil)
	var timeout *ExternalTimeoutError
	if !errors.As(err, &timeout) || err.Error() != "external dependency Secret rel/db (annotation db.external-dependency.werf.io/resource of ConfigMap rel/app) not ready after 300ms: absent" {
		t.Errorf("absent dependency: %v", err)
	}

	dep.Type = "widgets.example.com"
	err = c.AwaitExternal(t.Context(), []External{dep}, time.Hour, nil)
	var unawaitable *ExternalError
	if !errors.As(err, &unawaitable) || !meta.IsNoMatchError(err) {
		t.Errorf("unknown type: %v, want an *ExternalError at once", err)
	}
}
