package requests

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestKnownAbsentAnswersOnce marks a ConfigMap absent and reads it twice
// through a client whose transport is wrapped: the first read is answered
// NotFound without a request, the second reaches the server.
func TestKnownAbsentAnswersOnce(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns"}}`))
	}))
	defer srv.Close()
	var answered int
	absent := NewKnownAbsent(func() { answered++ })
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
	}, APIPath: "/api"}
	cfg.Wrap(absent.Wrap)
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	info := &resource.Info{
		Client: client, Namespace: "ns", Name: "cm",
		Mapping: &meta.RESTMapping{
			Resource:         schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Scope:            meta.RESTScopeNamespace,
		},
	}
	other := *info
	other.Name = "other"
	paths := absent.Mark([]*resource.Info{info})
	defer absent.Forget(paths)

	helper := resource.NewHelper(info.Client, info.Mapping)
	if _, err := helper.Get("ns", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("first read: err = %v, want NotFound", err)
	}
	if served.Load() != 0 || answered != 1 {
		t.Fatalf("first read: %d requests served, %d answered locally; want 0 and 1", served.Load(), answered)
	}
	if _, err := helper.Get("ns", "cm"); err != nil {
		t.Fatalf("second read: %v", err)
	}
	if _, err := helper.Get("ns", "other"); err != nil {
		t.Fatalf("read of an unmarked object: %v", err)
	}
	if served.Load() != 2 || answered != 1 {
		t.Errorf("%d requests served, %d answered locally; want 2 and 1", served.Load(), answered)
	}
}

// TestKnownAbsentForget drops marks that were not consumed.
func TestKnownAbsentForget(t *testing.T) {
	absent := NewKnownAbsent(nil)
	absent.paths["/a"] = 1
	absent.Forget([]string{"/a", "/b"})
	if absent.take("/a") || absent.take("/b") || len(absent.paths) != 0 {
		t.Errorf("marks left: %v", absent.paths)
	}
}
