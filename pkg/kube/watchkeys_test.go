package kube

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
)

// TestWatchKeys checks that the keys of listed, created and deleted
// objects of the watched namespace arrive, and none of another namespace.
func TestWatchKeys(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "things"}
	thing := func(ns, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.io/v1", "kind": "Thing", "metadata": map[string]any{"namespace": ns, "name": name},
		}}
	}
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "ThingList"}, thing("a", "old"), thing("b", "other"))
	keys := make(chan string, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- WatchKeys(ctx, client, gvr, "a", 0, func(k string) { keys <- k }) }()
	next := func() string {
		t.Helper()
		select {
		case k := <-keys:
			return k
		case <-time.After(30 * time.Second):
			t.Fatal("no key within 30 s")
			return ""
		}
	}
	if k := next(); k != "a/old" {
		t.Errorf("first key = %q, want the listed a/old", k)
	}
	res := client.Resource(gvr).Namespace("a")
	if _, err := res.Create(ctx, thing("a", "new"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if k := next(); k != "a/new" {
		t.Errorf("key after a create = %q, want a/new", k)
	}
	if err := res.Delete(ctx, "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if k := next(); k != "a/old" {
		t.Errorf("key after a delete = %q, want a/old", k)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchKeys = %v", err)
	}
	close(keys)
	for k := range keys {
		t.Errorf("unexpected key %q", k)
	}
}
