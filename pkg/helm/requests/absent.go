package requests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/cli-runtime/pkg/resource"
)

// KnownAbsent answers the existence checks Helm makes before creating
// objects, from what the operator knows itself: the Client's ownership
// check reads each object an upgrade is about to create, and a first
// install creates its objects without reading them (the create is the
// check). Helm's install and upgrade then read the same objects again. An
// object the ownership check found absent, or that a first install is
// about to create, is marked here (Mark); Helm's next GET of its path is
// answered 404 without a request, once. Marks are dropped when the
// operation ends (Forget). Should the object exist, Helm's create gets
// AlreadyExists and the operation fails (a first install undoes it).
//
// A bench of 100 modules of 4 objects each sent 400 of these GETs on its
// first converge, all 404 (see docs/benchmarks.md).
type KnownAbsent struct {
	answered func() // called for each answer; never nil

	mu    sync.Mutex
	paths pathCounts // marks not yet consumed
}

// NewKnownAbsent returns a KnownAbsent that calls answered (when not nil)
// for each read it answers.
func NewKnownAbsent(answered func()) *KnownAbsent {
	if answered == nil {
		answered = func() {}
	}
	return &KnownAbsent{answered: answered, paths: pathCounts{}}
}

// Mark records that the objects of infos are absent and returns their
// paths, for Forget.
func (k *KnownAbsent) Mark(infos []*resource.Info) []string {
	paths := objectPaths(infos)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.paths.add(paths)
	return paths
}

// Forget drops the marks of paths that were not consumed.
func (k *KnownAbsent) Forget(paths []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range paths {
		k.paths.drop(p)
	}
}

// take consumes a mark of path.
func (k *KnownAbsent) take(path string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.paths[path] <= 0 {
		return false
	}
	k.paths.drop(path)
	return true
}

// pathCounts counts the marks of URL paths, for the per-operation
// transports (KnownAbsent, RepeatedReads); its owner guards it.
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

// Wrap is a rest.Config WrapTransport.
func (k *KnownAbsent) Wrap(rt http.RoundTripper) http.RoundTripper {
	return absentTransport{absent: k, next: rt}
}

type absentTransport struct {
	absent *KnownAbsent
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
