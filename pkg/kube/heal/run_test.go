package heal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/kube"
)

// testTimeout bounds every wait of the tests with fakes.
const testTimeout = 10 * time.Second

const testLabel = "addon-operator.io/module"

// fakeMapper is a mapper of kinds added by the test, safe for use
// while the test adds kinds.
type fakeMapper struct {
	*meta.DefaultRESTMapper
	mu sync.Mutex
}

func (m *fakeMapper) KindForWithContext(ctx context.Context, resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.DefaultRESTMapper.KindForWithContext(ctx, resource)
}

func (m *fakeMapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.DefaultRESTMapper.RESTMappingWithContext(ctx, gk, versions...)
}

// add makes the kind known, as a CRD installed later would.
func (m *fakeMapper) add(gvk schema.GroupVersionKind, scope meta.RESTScope) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.AddSpecific(gvk, gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)+"s"), gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scope)
}

// testMapper knows ConfigMaps, Secrets and ClusterRoles.
func testMapper() *fakeMapper {
	rbac := schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	// RESTMapping without a version tries the default versions of the group.
	defaults := []schema.GroupVersion{{Version: "v1"}, rbac, {Group: "example.com", Version: "v1"}}
	m := &fakeMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(defaults)}
	m.add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	m.add(rbac.WithKind("ClusterRole"), meta.RESTScopeRoot)
	return m
}

// testOptions returns valid options for release namespace "ops"; nil
// arguments get an empty fake client and testMapper.
func testOptions(client metadata.Interface, mapper meta.RESTMapper) Options {
	if client == nil {
		scheme := runtime.NewScheme()
		_ = metav1.AddMetaToScheme(scheme)
		client = metadatafake.NewSimpleMetadataClient(scheme)
	}
	if mapper == nil {
		mapper = testMapper()
	}
	return Options{
		Metadata:    client,
		Kinds:       kube.NewResolver(mapper),
		Events:      make(chan Event, 16),
		ModuleLabel: testLabel,
		Namespace:   "ops",
	}
}

func testWatcher(t *testing.T, client metadata.Interface, mapper meta.RESTMapper) *Watcher {
	t.Helper()
	w, err := NewWatcher(testOptions(client, mapper))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testObject(apiVersion, kind, namespace, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{testLabel: "m"}},
	}
}

// testClient is a fake metadata client with objects; it sends the
// resource of every watch on watches once the watch is established, since
// the fake, unlike an API server, loses deletions made before that.
func testClient(watches chan<- schema.GroupVersionResource, objects ...runtime.Object) *metadatafake.FakeMetadataClient {
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme, objects...)
	client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err == nil {
			watches <- action.GetResource()
		}
		return true, w, err
	})
	return client
}

func TestHealWatcherRun(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	clusterRoles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	watches := make(chan schema.GroupVersionResource, 16)
	client := testClient(watches,
		testObject("v1", "ConfigMap", "ops", "a"),
		testObject("v1", "Secret", "ops", "s"),
		testObject("v1", "Secret", "ops", "s2"),
		testObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r"),
	)
	events := make(chan Event, 16)
	opts := testOptions(client, nil)
	opts.Events = events
	w, err := NewWatcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("m1", append(testObjects(), ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Name: "unknown"}))
	w.Watch("m2", []ObjectRef{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"}})
	w.Watch("m3", []ObjectRef{{APIVersion: "v1", Kind: "Secret", Name: "s2"}})

	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if err := w.WaitSynced(ctx); err != nil {
		t.Fatalf("WaitSynced: %v", err)
	}
	testWatches(ctx, t, watches, configMaps, secrets, clusterRoles)
	if err := w.Run(ctx); err == nil {
		t.Error("a second Run succeeded")
	}

	testDelete(t, client, configMaps, "ops", "a")
	testExpect(ctx, t, events, healEvent("m1", "ConfigMap", "a"))
	// m1 has fired; the deletion of s2 after s, seen by the same informer,
	// shows that s sent nothing.
	testDelete(t, client, secrets, "ops", "s")
	testDelete(t, client, secrets, "ops", "s2")
	testExpect(ctx, t, events, healEvent("m3", "Secret", "s2"))
	testDelete(t, client, clusterRoles, "", "r")
	testExpect(ctx, t, events, Event{Module: "m2", Object: ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"}})

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if err := w.WaitSynced(t.Context()); !errors.Is(err, ErrStopped) {
		t.Errorf("WaitSynced after Run = %v, want ErrStopped", err)
	}
}

// testWatches waits until a watch of each resource is established.
func testWatches(ctx context.Context, t *testing.T, watches <-chan schema.GroupVersionResource, want ...schema.GroupVersionResource) {
	t.Helper()
	missing := make(map[schema.GroupVersionResource]bool, len(want))
	for _, gvr := range want {
		missing[gvr] = true
	}
	for len(missing) > 0 {
		select {
		case gvr := <-watches:
			delete(missing, gvr)
		case <-ctx.Done():
			t.Fatalf("no watch of %v", missing)
		}
	}
}

func testDelete(t *testing.T, client metadata.Interface, gvr schema.GroupVersionResource, namespace, name string) {
	t.Helper()
	if err := client.Resource(gvr).Namespace(namespace).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
}

func testExpect(ctx context.Context, t *testing.T, events <-chan Event, want Event) {
	t.Helper()
	select {
	case got := <-events:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event (-want +got):\n%s", diff)
		}
	case <-ctx.Done():
		t.Fatalf("no event, want %+v", want)
	}
}

func TestHealSlimKeepsIdentityOnly(t *testing.T) {
	obj := testObject("v1", "ConfigMap", "ops", "a")
	obj.UID, obj.ResourceVersion = "u1", "7"
	obj.Annotations = map[string]string{"big": "value"}
	obj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "helm"}}
	got, err := healSlim(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{
		TypeMeta:   obj.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "a", UID: "u1", ResourceVersion: "7"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slim object (-want +got):\n%s", diff)
	}
}

func TestHealWatcherRetriesUnknownKinds(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	watches := make(chan schema.GroupVersionResource, 16)
	client := testClient(watches, testObject("example.com/v1", "Widget", "ops", "w"))
	mapper := testMapper()
	clk := clocktesting.NewFakeClock(time.Now())
	events := make(chan Event, 16)
	opts := testOptions(client, mapper)
	opts.Events, opts.Clock = events, clk
	w, err := NewWatcher(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.Watch("m1", []ObjectRef{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}})

	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	if err := w.WaitSynced(ctx); err != nil { // reconciled: the kind is unknown
		t.Fatalf("WaitSynced: %v", err)
	}
	mapper.add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, meta.RESTScopeNamespace)
	clk.Step(retryMin) // the retry finds the kind
	testWatches(ctx, t, watches, widgets)
	testDelete(t, client, widgets, "ops", "w")
	testExpect(ctx, t, events, Event{Module: "m1", Object: ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "ops", Name: "w"}})

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func TestHealRetryBackoff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	run := &healRun{unresolved: map[schema.GroupKind]bool{{Kind: "Widget"}: true}}
	got := make([]time.Duration, 0, 12)
	run.scheduleRetry(clk, false)
	got = append(got, run.backoff)
	run.scheduleRetry(clk, false) // a Watch in between keeps the armed timer
	got = append(got, run.backoff)
	for range 10 {
		run.scheduleRetry(clk, true)
		got = append(got, run.backoff)
	}
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, retryMax, retryMax}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoffs (-want +got):\n%s", diff)
	}
	clear(run.unresolved)
	run.scheduleRetry(clk, false)
	if run.retry != nil || run.backoff != 0 || clk.HasWaiters() {
		t.Errorf("retry timer still armed once every kind resolved")
	}
}
