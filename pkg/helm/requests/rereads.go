package requests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/cli-runtime/pkg/resource"
)

// RepeatedReads answers, during one install or upgrade, Helm's repeated
// reads of an object of the release from its first read. Helm's update
// reads each object to learn that it exists, again to compute the patch,
// and a third time when there is nothing to patch: three GETs of the same
// object within microseconds, with no write in between.
//
// Contracts:
//   - Only objects marked for an operation (Mark) are remembered, and only
//     until it ends (Forget): nothing is answered across operations.
//   - Only a successful GET of the object itself (no query) is remembered,
//     per Accept header; a later GET of it with the same Accept gets the
//     same status, headers and body, without a request.
//   - Any other request to the object's path (PATCH, PUT, DELETE...)
//     drops what was remembered of it before it is sent, so a read after
//     a write goes to the server.
//
// An answer is as fresh as the first read: it stands for a server that
// answered the later read first, which a change made by someone else in
// between could not tell apart.
type RepeatedReads struct {
	answered func() // called for each answer; never nil

	mu    sync.Mutex
	marks pathCounts // operations marking each path
	seen  map[readKey]seenResponse
	// writes counts the other requests to each marked path, and forgets
	// the paths forgotten, so that a read that was under way during either
	// is not remembered.
	writes  map[string]int
	forgets int
}

type readKey struct{ path, accept string }

type seenResponse struct {
	status string
	code   int
	header http.Header
	body   []byte
}

// NewRepeatedReads returns a RepeatedReads that calls answered (when not
// nil) for each read it answers.
func NewRepeatedReads(answered func()) *RepeatedReads {
	if answered == nil {
		answered = func() {}
	}
	return &RepeatedReads{answered: answered, marks: pathCounts{}, seen: map[readKey]seenResponse{}, writes: map[string]int{}}
}

// Mark makes the objects of infos remembered once read, and returns their
// paths, for Forget.
func (r *RepeatedReads) Mark(infos []*resource.Info) []string {
	paths := objectPaths(infos)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks.add(paths)
	return paths
}

// Forget ends one operation's marks of paths; an object no operation
// marks any more is forgotten.
func (r *RepeatedReads) Forget(paths []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		if !r.marks.drop(p) {
			continue
		}
		delete(r.writes, p)
		r.forgets++
		r.dropLocked(p)
	}
}

func (r *RepeatedReads) dropLocked(path string) {
	for k := range r.seen {
		if k.path == path {
			delete(r.seen, k)
		}
	}
}

// Wrap is a rest.Config WrapTransport.
func (r *RepeatedReads) Wrap(rt http.RoundTripper) http.RoundTripper {
	return rereadTransport{reads: r, next: rt}
}

type rereadTransport struct {
	reads *RepeatedReads
	next  http.RoundTripper
}

func (t rereadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := t.reads
	key := readKey{path: req.URL.Path, accept: req.Header.Get("Accept")}
	r.mu.Lock()
	marked := r.marks[key.path] > 0
	if marked && req.Method != http.MethodGet {
		r.writes[key.path]++
		r.dropLocked(key.path)
	}
	seen, ok := r.seen[key]
	writes, forgets := r.writes[key.path], r.forgets
	r.mu.Unlock()
	if !marked || req.Method != http.MethodGet || req.URL.RawQuery != "" {
		return t.next.RoundTrip(req) //nolint:wrapcheck // a transport passes errors on as they are
	}
	if ok {
		r.answered()
		return seen.response(req), nil
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err //nolint:wrapcheck // a transport passes errors on as they are
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response of GET %s: %w", key.path, err)
	}
	seen = seenResponse{status: resp.Status, code: resp.StatusCode, header: resp.Header.Clone(), body: body}
	r.mu.Lock()
	if r.writes[key.path] == writes && r.forgets == forgets { // not written nor forgotten while the request ran
		r.seen[key] = seen
	}
	r.mu.Unlock()
	return seen.response(req), nil
}

// response is a new response to req with what was seen.
func (s seenResponse) response(req *http.Request) *http.Response {
	return &http.Response{
		Status: s.status, StatusCode: s.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: s.header.Clone(), Body: io.NopCloser(bytes.NewReader(s.body)), ContentLength: int64(len(s.body)),
		Request: req,
	}
}
