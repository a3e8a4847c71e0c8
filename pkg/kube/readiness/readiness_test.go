package readiness

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/utils/clock"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

func deploymentsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
}

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetGeneration(1)
	return u
}

// deployment is a Deployment of 3 replicas with available of them
// available, as its controller would report it.
func deployment(available int64) *unstructured.Unstructured {
	cond := "False"
	if available == 3 {
		cond = "True"
	}
	return obj("apps/v1", "Deployment", "web", "x", map[string]any{
		"spec": map[string]any{"replicas": int64(3)},
		"status": map[string]any{
			"observedGeneration": int64(1), "replicas": int64(3), "updatedReplicas": int64(3),
			"readyReplicas": available, "availableReplicas": available,
			"conditions": []any{
				map[string]any{"type": "Available", "status": cond},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			},
		},
	})
}

func newChecker(t *testing.T, objs ...runtime.Object) (*Checker, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		deploymentsGVR():                                  "DeploymentList",
		{Version: "v1", Resource: "configmaps"}:           "ConfigMapList",
		{Group: "batch", Version: "v1", Resource: "jobs"}: "JobList",
	}, objs...)
	c := NewChecker(dyn, kube.NewResolver(mapper), clock.RealClock{})
	c.first, c.max = 5*time.Millisecond, 20*time.Millisecond
	return c, dyn
}

// The objects of the tests' release, named as in its manifest.
func theDeployment() Object { return Object{APIVersion: "apps/v1", Kind: "Deployment", Name: "x"} }
func theConfigMap() Object  { return Object{APIVersion: "v1", Kind: "ConfigMap", Name: "c"} }

func TestCheck(t *testing.T) {
	cm := obj("v1", "ConfigMap", "web", "c", nil)
	failedJob := obj("batch/v1", "Job", "web", "j", map[string]any{
		"spec":   map[string]any{"completions": int64(1)},
		"status": map[string]any{"failed": int64(1), "conditions": []any{map[string]any{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}}},
	})
	tests := []struct {
		name    string
		objs    []runtime.Object
		check   []Object
		want    *Pending
		wantErr string
	}{
		{name: "a ConfigMap is ready once it exists", objs: []runtime.Object{cm}, check: []Object{theConfigMap()}},
		{
			name: "a Deployment short of available replicas is named with kstatus's message",
			objs: []runtime.Object{cm, deployment(1)}, check: []Object{theConfigMap(), theDeployment()},
			want: &Pending{Object: Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "x"}, Status: status.InProgressStatus, Message: "Available: 1/3"},
		},
		{name: "an available Deployment is ready", objs: []runtime.Object{deployment(3)}, check: []Object{theDeployment()}},
		{
			name: "a missing object is not ready", check: []Object{theDeployment()},
			want: &Pending{Object: Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "x"}, Status: status.NotFoundStatus, Message: "not found"},
		},
		{name: "a ConfigMap the release has is not read again", check: []Object{theConfigMap()}},
		{
			name: "a failed Job fails the check", objs: []runtime.Object{failedJob},
			check:   []Object{{APIVersion: "batch/v1", Kind: "Job", Namespace: "web", Name: "j"}},
			wantErr: "Job web/j failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newChecker(t, tt.objs...)
			got, err := c.Check(t.Context(), "web", tt.check)
			if tt.wantErr != "" {
				var nr *NotReadyError
				if !errors.As(err, &nr) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a NotReadyError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWaitEndsWhenTheStatusIsSet(t *testing.T) {
	c, dyn := newChecker(t, deployment(1))
	seen := make(chan Pending, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.Wait(t.Context(), "web", []Object{theDeployment()}, 30*time.Second, nil, func(p Pending) { seen <- p })
	}()
	if p := <-seen; p.String() != "Deployment web/x: Available: 1/3" {
		t.Errorf("progress %q", p.String())
	}
	if _, err := dyn.Resource(deploymentsGVR()).Namespace("web").UpdateStatus(t.Context(), deployment(3), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Wait = %v, want nil once available", err)
	}
}

func TestWaitTimesOutNamingTheObject(t *testing.T) {
	c, _ := newChecker(t, deployment(2))
	err := c.Wait(t.Context(), "web", []Object{theDeployment()}, 50*time.Millisecond, nil, nil)
	var nr *NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("Wait = %v, want a NotReadyError", err)
	}
	if want := "not ready after 50ms: Deployment web/x: Available: 2/3"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestWaitLooksAgainWhenTheObjectsChange(t *testing.T) {
	c, dyn := newChecker(t, deployment(1))
	c.first, c.maxWatched = time.Hour, time.Hour // no second look but for a change
	changed := make(chan struct{}, 1)
	seen := make(chan Pending, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.Wait(t.Context(), "web", []Object{theDeployment()}, 2*time.Hour, changed, func(p Pending) { seen <- p })
	}()
	<-seen // the first look found it not ready
	if _, err := dyn.Resource(deploymentsGVR()).Namespace("web").UpdateStatus(t.Context(), deployment(3), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed <- struct{}{}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait = %v, want nil once available", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not look again when told the objects changed")
	}
}

func TestAnyToRead(t *testing.T) {
	created := theDeployment()
	created.ReadyAsCreated = true
	for _, tt := range []struct {
		name    string
		objects []Object
		want    bool
	}{
		{"nothing", nil, false},
		{"a ConfigMap is ready whenever it exists", []Object{theConfigMap()}, false},
		{"a Deployment just created as ready", []Object{created}, false},
		{"a Deployment to read", []Object{theConfigMap(), theDeployment()}, true},
	} {
		if got := AnyToRead(tt.objects); got != tt.want {
			t.Errorf("%s: AnyToRead = %v, want %v", tt.name, got, tt.want)
		}
	}
}
