package helm

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
)

// knownAbsent answers the existence checks Helm makes before creating
// objects, from what the operator knows itself: claimObjects reads each
// object an upgrade is about to create (the ownership check), and a first
// install creates its objects without reading them (installFresh: the
// create is the check). Helm's install and upgrade then read the same
// objects again. An object claimObjects found absent, or that installFresh
// is about to create, is marked here; Helm's next GET of its path is
// answered 404 without a request, once. Marks are dropped when the
// operation ends. Should the object exist, Helm's create gets
// AlreadyExists and the operation fails (installFresh undoes it).
//
// A bench of 100 modules of 4 objects each sent 400 of these GETs on its
// first converge, all 404 (see docs/benchmarks.md).
type knownAbsent struct {
	answered func() // called for each answer; never nil

	mu    sync.Mutex
	paths pathCounts // marks not yet consumed
}

func newKnownAbsent(answered func()) *knownAbsent {
	if answered == nil {
		answered = func() {}
	}
	return &knownAbsent{answered: answered, paths: pathCounts{}}
}

// mark records that the objects of infos are absent and returns their
// paths, for forget.
func (k *knownAbsent) mark(infos []*resource.Info) []string {
	paths := objectPaths(infos)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.paths.add(paths)
	return paths
}

// forget drops the marks of paths that were not consumed.
func (k *knownAbsent) forget(paths []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range paths {
		k.paths.drop(p)
	}
}

// take consumes a mark of path.
func (k *knownAbsent) take(path string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.paths[path] <= 0 {
		return false
	}
	k.paths.drop(path)
	return true
}

// pathCounts counts the marks of URL paths, for the per-operation
// transports (knownAbsent, repeatedReads); its owner guards it.
type pathCounts map[string]int

func (c pathCounts) add(paths []string) {
	for _, p := range paths {
		c[p]++
	}
}

// drop removes one mark of path and reports whether none is left.
func (c pathCounts) drop(path string) bool {
	c[path]--
	if c[path] > 0 {
		return false
	}
	delete(c, path)
	return true
}

// objectPaths are the URL paths GETs of the objects of infos request.
func objectPaths(infos []*resource.Info) []string {
	paths := make([]string, 0, len(infos))
	for _, info := range infos {
		if p, ok := objectPath(info); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// objectPath is the URL path a GET of info's object requests.
func objectPath(info *resource.Info) (string, bool) {
	if info.Client == nil || info.Mapping == nil {
		return "", false
	}
	req := info.Client.Get().NamespaceIfScoped(info.Namespace, info.Namespaced()).Resource(info.Mapping.Resource.Resource).Name(info.Name)
	if req == nil || req.URL() == nil {
		return "", false
	}
	return req.URL().Path, true
}

// wrap is a rest.Config WrapTransport.
func (k *knownAbsent) wrap(rt http.RoundTripper) http.RoundTripper {
	return absentTransport{absent: k, next: rt}
}

type absentTransport struct {
	absent *knownAbsent
	next   http.RoundTripper
}

func (t absentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.RawQuery != "" || !t.absent.take(req.URL.Path) {
		return t.next.RoundTrip(req) //nolint:wrapcheck // a transport passes errors on as they are
	}
	t.absent.answered()
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"not found (known absent)","reason":"NotFound","code":%d}`,
		http.StatusNotFound)
	return &http.Response{
		Status: "404 Not Found", StatusCode: http.StatusNotFound, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewBufferString(body)),
		ContentLength: int64(len(body)), Request: req,
	}, nil
}

// reachableClient is Helm's kube client without its reachability check:
// Helm asks the server's version (GET /version, with a client built for
// the purpose) at the start of every install, upgrade, uninstall and
// list. The operation's own requests report an unreachable server just as
// well, and the operator watches the API server's health itself. Every
// other method, and every optional interface of *kube.Client, is Helm's.
//
// Create is Helm's too, and also notes what it created in created (nil
// notes nothing), also when it failed: the objects an install made from
// the manifest, at the versions the API server gave them, need no drift
// check until they change, and an install undone deletes them.
//
// Delete is Helm's, except for the objects in spare (keys by objectKey),
// which it leaves alone: an uninstall's objects that belong to another
// owner (see spareForeign).
//
// WatchUntilReady is Helm's too, and notes in hooks (nil notes nothing)
// the chart hook it waits for, so that an error names it (see hookWaits).
type reachableClient struct {
	*kube.Client
	created *createdObjects
	spare   map[string]bool
	hooks   *hookWaits
}

func (c reachableClient) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	return c.DeleteWithPropagationPolicy(resources, metav1.DeletePropagationBackground)
}

func (c reachableClient) DeleteWithPropagationPolicy(resources kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if len(c.spare) > 0 {
		resources = resources.Filter(func(info *resource.Info) bool { return !c.spare[objectKey(info)] })
		if len(resources) == 0 {
			return &kube.Result{}, nil
		}
	}
	return c.Client.DeleteWithPropagationPolicy(resources, policy) //nolint:wrapcheck // Helm's own errors, as Helm returns them
}

func (reachableClient) IsReachable() error { return nil }

func (c reachableClient) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := c.Client.Create(resources)
	if err != nil {
		// Helm returns no result when a create failed; the objects it did
		// create hold what the server answered, their UIDs among it.
		res = &kube.Result{Created: resources.Filter(created)}
	}
	c.created.add(res)
	return res, err //nolint:wrapcheck // Helm's own error, as Helm returns it
}

// created reports whether info's object is one the server returned: the
// rendered objects carry no UID.
func created(info *resource.Info) bool {
	m, err := meta.Accessor(info.Object)
	return err == nil && m.GetUID() != ""
}
