package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/resource"
	restfake "k8s.io/client-go/rest/fake"
)

// Helm's ownership annotations, which fakeCluster sets as Helm does.
const (
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// fakeCluster is a Helm kube client over an in-memory store of namespaced
// objects, for tests that need objects to exist: Build decodes manifests
// (every kind namespaced, resource = lowercase kind + "s"), Create, Update
// and Delete change the store, and every object it builds reads the store
// through a fake REST client, so info.Get and Helm's adoption checks see
// the live object. Other methods print nothing and succeed.
type fakeCluster struct {
	kubefake.PrintingKubeClient

	mu sync.Mutex
	// objects by REST path: /namespaces/<namespace>/<resource>/<name>.
	objects map[string]*unstructured.Unstructured
	// deleteErr, when set, fails Delete and DeleteWithPropagationPolicy.
	deleteErr error
	// patches counts the PATCH requests served.
	patches int
}

var _ kube.InterfaceDeletionPropagation = (*fakeCluster)(nil)

func newFakeCluster() *fakeCluster {
	return &fakeCluster{
		PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard},
		objects:            map[string]*unstructured.Unstructured{},
	}
}

func (f *fakeCluster) Build(r io.Reader, _ bool) (kube.ResourceList, error) {
	dec := yaml.NewYAMLOrJSONDecoder(r, 4096)
	var list kube.ResourceList
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return list, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode manifest: %w", err)
		}
		if doc == nil { // a document of comments only
			continue
		}
		obj := &unstructured.Unstructured{Object: doc}
		gvk := obj.GroupVersionKind()
		namespace := obj.GetNamespace()
		if namespace == "" {
			namespace = testNamespace
		}
		list.Append(&resource.Info{
			Client: f.restClient(),
			Mapping: &meta.RESTMapping{
				Resource:         gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind) + "s"),
				GroupVersionKind: gvk,
				Scope:            meta.RESTScopeNamespace,
			},
			Namespace: namespace,
			Name:      obj.GetName(),
			Object:    obj,
		})
	}
}

// restClient serves GETs from the store. One per object: the fake records
// its last request without locking.
func (f *fakeCluster) restClient() *restfake.RESTClient {
	return &restfake.RESTClient{
		NegotiatedSerializer: resource.UnstructuredPlusDefaultContentConfig().NegotiatedSerializer,
		Client:               restfake.CreateHTTPClient(f.serve),
	}
}

func (f *fakeCluster) serve(req *http.Request) (*http.Response, error) {
	var obj *unstructured.Unstructured
	var ok bool
	switch req.Method {
	case http.MethodGet:
		f.mu.Lock()
		obj, ok = f.objects[req.URL.Path]
		f.mu.Unlock()
	case http.MethodPatch:
		var err error
		if obj, ok, err = f.mergePatch(req); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("fake cluster: %s %s not supported", req.Method, req.URL.Path)
	}
	code, body := http.StatusNotFound, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	if ok {
		var err error
		if body, err = obj.MarshalJSON(); err != nil {
			return nil, err
		}
		code = http.StatusOK
	}
	return &http.Response{
		StatusCode: code,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}, nil
}

// mergePatch applies the JSON merge patch of req to the stored object.
func (f *fakeCluster) mergePatch(req *http.Request) (*unstructured.Unstructured, bool, error) {
	if ct := req.Header.Get("Content-Type"); ct != string(types.MergePatchType) {
		return nil, false, fmt.Errorf("fake cluster: patch type %q not supported", ct)
	}
	patch, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[req.URL.Path]
	if !ok {
		return nil, false, nil
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		return nil, false, err
	}
	if doc, err = jsonpatch.MergePatch(doc, patch); err != nil {
		return nil, false, err
	}
	patched := &unstructured.Unstructured{}
	if err := patched.UnmarshalJSON(doc); err != nil {
		return nil, false, err
	}
	f.objects[req.URL.Path] = patched
	f.patches++
	return patched, true, nil
}

// object returns a copy of the stored object of kind (lowercase plural)
// and name in the test namespace, nil when there is none.
func (f *fakeCluster) object(plural, name string) *unstructured.Unstructured {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[path.Join("/namespaces", testNamespace, plural, name)]
	if !ok {
		return nil
	}
	return obj.DeepCopy()
}

func storeKey(info *resource.Info) string {
	return path.Join("/namespaces", info.Namespace, info.Mapping.Resource.Resource, info.Name)
}

func (f *fakeCluster) Create(resources kube.ResourceList) (*kube.Result, error) {
	f.put(resources)
	return &kube.Result{Created: resources}, nil
}

func (f *fakeCluster) Update(original, target kube.ResourceList, _ bool) (*kube.Result, error) {
	res := &kube.Result{}
	f.mu.Lock()
	for _, info := range target {
		if _, ok := f.objects[storeKey(info)]; ok {
			res.Updated = append(res.Updated, info)
		} else {
			res.Created = append(res.Created, info)
		}
	}
	f.mu.Unlock()
	f.put(target)
	res.Deleted = original.Difference(target)
	f.remove(res.Deleted)
	return res, nil
}

func (f *fakeCluster) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	return f.DeleteWithPropagationPolicy(resources, metav1.DeletePropagationBackground)
}

func (f *fakeCluster) DeleteWithPropagationPolicy(resources kube.ResourceList, _ metav1.DeletionPropagation) (*kube.Result, []error) {
	f.mu.Lock()
	err := f.deleteErr
	f.mu.Unlock()
	if err != nil {
		return nil, []error{err}
	}
	f.remove(resources)
	return &kube.Result{Deleted: resources}, nil
}

func (f *fakeCluster) put(resources kube.ResourceList) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, info := range resources {
		f.objects[storeKey(info)] = info.Object.(*unstructured.Unstructured).DeepCopy()
	}
}

func (f *fakeCluster) remove(resources kube.ResourceList) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, info := range resources {
		delete(f.objects, storeKey(info))
	}
}

func (f *fakeCluster) failDeletes(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleteErr = err
}

// apply stores the objects of manifest as they would be after an install
// of release owner ("" for none), with annotations added.
func (f *fakeCluster) apply(t *testing.T, manifest, owner string, annotations map[string]string) {
	t.Helper()
	objects, err := f.Build(strings.NewReader(manifest), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range objects {
		obj := info.Object.(*unstructured.Unstructured)
		a := maps.Clone(annotations)
		if a == nil {
			a = map[string]string{}
		}
		if owner != "" {
			a[helmReleaseName], a[helmReleaseNamespace] = owner, testNamespace
		}
		obj.SetAnnotations(a)
	}
	f.put(objects)
}

// inventory lists the stored objects as "Kind/name (owner release)",
// sorted.
func (f *fakeCluster) inventory() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.objects))
	for _, obj := range f.objects {
		out = append(out, fmt.Sprintf("%s/%s (%s)", obj.GetKind(), obj.GetName(), obj.GetAnnotations()[helmReleaseName]))
	}
	slices.Sort(out)
	return out
}
