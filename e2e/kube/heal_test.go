package kube

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/addon-operator/addon-operator/pkg/kube"
	"github.com/addon-operator/addon-operator/pkg/kube/heal"
)

const (
	// healTimeout bounds every wait for a heal event.
	healTimeout = 30 * time.Second
	// healModuleLabel is the label pkg/helm puts on every rendered object
	// (helm.LabelModule).
	healModuleLabel = "addon-operator.io/module"
)

// healEnv is a heal.Watcher running on the local control plane until the
// test ends, with the release namespace of its own.
type healEnv struct {
	watcher *heal.Watcher
	client  kubernetes.Interface
	events  chan heal.Event
	ns      string
}

func healSetup(t *testing.T) *healEnv {
	t.Helper()
	md, err := metadata.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &healEnv{client: cp.Clientset(t), events: make(chan heal.Event, 16), ns: cp.Namespace(t)}
	e.watcher, err = heal.NewWatcher(heal.Options{
		Metadata:    md,
		Kinds:       kube.NewDiscovery(disc, 0, nil).Resolver(),
		Log:         slog.New(slog.NewTextHandler(t.Output(), nil)),
		Events:      e.events,
		ModuleLabel: healModuleLabel,
		Namespace:   e.ns,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.watcher.Run(t.Context()) }()
	t.Cleanup(func() { // t.Context is cancelled before cleanups run
		if err := <-done; err != nil {
			t.Errorf("heal watcher: %v", err)
		}
	})
	return e
}

// configMap creates a ConfigMap of module in the release namespace and
// returns its reference as a manifest without namespaces gives it.
func (e *healEnv) configMap(t *testing.T, module, name string) heal.ObjectRef {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{healModuleLabel: module}}}
	if _, err := e.client.CoreV1().ConfigMaps(e.ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap %s: %v", name, err)
	}
	return heal.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Name: name}
}

func (e *healEnv) deleteConfigMap(t *testing.T, name string) {
	t.Helper()
	if err := e.client.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete ConfigMap %s: %v", name, err)
	}
}

func (e *healEnv) waitSynced(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), healTimeout)
	defer cancel()
	if err := e.watcher.WaitSynced(ctx); err != nil {
		t.Fatalf("wait for the informers: %v", err)
	}
}

// expect waits for the next event and compares it with want. Since events
// of one informer arrive in order, it also proves that deletions seen by
// the same informer before want's sent nothing.
func (e *healEnv) expect(t *testing.T, want heal.Event) {
	t.Helper()
	select {
	case got := <-e.events:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("event (-want +got):\n%s", diff)
		}
	case <-time.After(healTimeout):
		t.Fatalf("no event within %v, want %+v", healTimeout, want)
	}
}

// in returns ref in the release namespace, as events report it.
func (e *healEnv) in(ref heal.ObjectRef) heal.ObjectRef {
	ref.Namespace = e.ns
	return ref
}

func TestHealDeletedObjectSendsOneEventPerWatch(t *testing.T) {
	e := healSetup(t)
	a, b := e.configMap(t, "m1", "a"), e.configMap(t, "m1", "b")
	sync := e.configMap(t, "sync", "sync")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: e.ns, Labels: map[string]string{healModuleLabel: "m1"}}}
	if _, err := e.client.CoreV1().Secrets(e.ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := heal.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: e.ns, Name: "s"}
	unknown := heal.ObjectRef{APIVersion: "nothing.example.com/v1", Kind: "Nothing", Name: "x"}
	e.watcher.Watch("m1", []heal.ObjectRef{a, b, s, unknown}) // the unknown kind is skipped
	e.watcher.Watch("sync", []heal.ObjectRef{sync})
	e.waitSynced(t)

	start := time.Now()
	e.deleteConfigMap(t, "a")
	e.expect(t, heal.Event{Module: "m1", Object: e.in(a)})
	t.Logf("delete-to-event latency: %v", time.Since(start))

	// m1 has had its event: deleting b sends nothing until the next Watch.
	e.deleteConfigMap(t, "b")
	e.deleteConfigMap(t, "sync")
	e.expect(t, heal.Event{Module: "sync", Object: e.in(sync)})

	e.watcher.Watch("m1", []heal.ObjectRef{s}) // as after the module run that followed
	start = time.Now()
	if err := e.client.CoreV1().Secrets(e.ns).Delete(t.Context(), "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect(t, heal.Event{Module: "m1", Object: s})
	t.Logf("delete-to-event latency after Watch: %v", time.Since(start))
}

func TestHealPausedForgottenAndUnlistedSendNothing(t *testing.T) {
	e := healSetup(t)
	a, b := e.configMap(t, "m1", "a"), e.configMap(t, "m1", "b")
	e.configMap(t, "m1", "unlisted")
	c := e.configMap(t, "m2", "c")
	sync1, sync2 := e.configMap(t, "sync", "sync1"), e.configMap(t, "sync", "sync2")
	e.watcher.Pause("m1")
	e.watcher.Watch("m1", []heal.ObjectRef{a, b})
	e.watcher.Watch("m2", []heal.ObjectRef{c})
	e.watcher.Watch("sync", []heal.ObjectRef{sync1})
	e.waitSynced(t)

	e.deleteConfigMap(t, "a")        // paused
	e.deleteConfigMap(t, "unlisted") // not in m1's list
	e.watcher.Forget("m2")
	e.deleteConfigMap(t, "c") // forgotten
	e.deleteConfigMap(t, "sync1")
	e.expect(t, heal.Event{Module: "sync", Object: e.in(sync1)})

	e.watcher.Resume("m1")
	e.deleteConfigMap(t, "b")
	e.expect(t, heal.Event{Module: "m1", Object: e.in(b)})

	e.watcher.Watch("sync", []heal.ObjectRef{sync2})
	e.deleteConfigMap(t, "sync2")
	e.expect(t, heal.Event{Module: "sync", Object: e.in(sync2)})
}

func TestHealDeletedClusterScopedObject(t *testing.T) {
	e := healSetup(t)
	name := e.ns + "-reader" // cluster-scoped names are shared by all tests
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{healModuleLabel: "m1"}}}
	if _, err := e.client.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ref := heal.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}
	e.watcher.Watch("m1", []heal.ObjectRef{ref})
	e.waitSynced(t)

	start := time.Now()
	if err := e.client.RbacV1().ClusterRoles().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect(t, heal.Event{Module: "m1", Object: ref})
	t.Logf("delete-to-event latency (ClusterRole): %v", time.Since(start))
}

func TestHealObjectLosingTheModuleLabelCountsAsDeleted(t *testing.T) {
	e := healSetup(t)
	a := e.configMap(t, "m1", "a")
	e.watcher.Watch("m1", []heal.ObjectRef{a})
	e.waitSynced(t)

	// The watch is label-selected: an object leaving the selection is a
	// deletion to the informer, and the object may indeed need Helm again.
	patch := []byte(`{"metadata":{"labels":{"` + healModuleLabel + `":null}}}`)
	if _, err := e.client.CoreV1().ConfigMaps(e.ns).Patch(t.Context(), "a", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect(t, heal.Event{Module: "m1", Object: e.in(a)})
}
