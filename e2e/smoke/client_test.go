package smoke

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

const eventTimeout = 10 * time.Second

func TestServerReportsItsVersion(t *testing.T) {
	v, err := cp.Clientset(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != cp.Version {
		t.Errorf("server version = %q, want %q", v.GitVersion, cp.Version)
	}
}

func TestClientCreatesAndWatches(t *testing.T) {
	ns := cp.Namespace(t)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	w, err := cms.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}, Data: map[string]string{"k": "v"}}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	deadline := time.After(eventTimeout)
	for {
		select {
		case ev := <-w.ResultChan():
			got, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type == watch.Added && ok && got.Name == "watched" {
				if got.Data["k"] != "v" {
					t.Errorf("watched data = %v, want k=v", got.Data)
				}
				return
			}
		case <-deadline:
			t.Fatal("no Added event for the created ConfigMap")
		}
	}
}

// informerEvent is what the dynamic informer handler saw.
type informerEvent struct {
	kind, name, value string
}

func TestDynamicInformerSeesAddModifyDelete(t *testing.T) {
	ns := cp.Namespace(t)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	informer := factory.ForResource(gvr).Informer()
	events := make(chan informerEvent, 16)
	record := func(kind string, obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		u := obj.(*unstructured.Unstructured)
		v, _, _ := unstructured.NestedString(u.Object, "data", "k")
		events <- informerEvent{kind, u.GetName(), v}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("Added", obj) },
		UpdateFunc: func(_, obj any) { record("Modified", obj) },
		DeleteFunc: func(obj any) { record("Deleted", obj) },
	}); err != nil {
		t.Fatalf("add handler: %v", err)
	}
	// Shutdown waits for the informers, which stop only when their stop
	// channel closes: cancel first.
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown()
	defer close(stop)
	if !cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced) {
		t.Fatal("informer did not sync")
	}

	res := dyn.Resource(gvr).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "dyn"},
		"data":     map[string]any{"k": "one"},
	}}
	created, err := res.Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	want(t, events, informerEvent{"Added", "dyn", "one"})

	if err := unstructured.SetNestedField(created.Object, "two", "data", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Update(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	want(t, events, informerEvent{"Modified", "dyn", "two"})

	if err := res.Delete(t.Context(), "dyn", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	want(t, events, informerEvent{"Deleted", "dyn", "two"})
}

func want(t *testing.T, events <-chan informerEvent, w informerEvent) {
	t.Helper()
	select {
	case got := <-events:
		if got != w {
			t.Fatalf("informer event = %+v, want %+v", got, w)
		}
	case <-time.After(eventTimeout):
		t.Fatalf("no informer event, want %+v", w)
	}
}
