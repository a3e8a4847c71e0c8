package requests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// objectServer answers every request with the object's current version in
// the body ("v1", "v2"... bumped by each write), and records what reached
// it. A GET of a path named in block waits until unblock is closed.
type objectServer struct {
	mu      sync.Mutex
	version int
	sent    []string
	block   map[string]chan struct{} // path -> entered, closed on arrival
	unblock chan struct{}
}

func (s *objectServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.sent = append(s.sent, req.Method+" "+req.URL.RequestURI())
	entered := s.block[req.URL.Path]
	if req.Method != http.MethodGet {
		s.version++
	}
	body := "v" + strconv.Itoa(s.version)
	s.mu.Unlock()
	if entered != nil && req.Method == http.MethodGet {
		close(entered)
		<-s.unblock
	}
	code := http.StatusOK
	if strings.HasSuffix(req.URL.Path, "/absent") {
		code = http.StatusNotFound
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func (s *objectServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := s.sent
	s.sent = nil
	return sent
}

const objPath = "/api/v1/namespaces/ns/configmaps/echo"

func send(t *testing.T, rt http.RoundTripper, method, uri, accept string) string {
	t.Helper()
	body, err := roundTrip(t.Context(), rt, method, uri, accept)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func roundTrip(ctx context.Context, rt http.RoundTripper, method, uri, accept string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, "https://server"+uri, http.NoBody)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", accept)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, uri, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestRepeatedReads(t *testing.T) {
	type call struct{ method, uri, accept string }
	get := func(uri string) call { return call{http.MethodGet, uri, "application/json"} }
	tests := []struct {
		name   string
		marked bool
		calls  []call
		want   []string // bodies
		sent   []string
	}{
		{"unmarked objects are always read", false, []call{get(objPath), get(objPath)},
			[]string{"v0", "v0"}, []string{"GET " + objPath, "GET " + objPath}},
		{"a marked object is read once", true, []call{get(objPath), get(objPath), get(objPath)},
			[]string{"v0", "v0", "v0"}, []string{"GET " + objPath}},
		{"a write makes the next read go to the server", true, []call{get(objPath), {http.MethodPatch, objPath, "application/json"}, get(objPath), get(objPath)},
			[]string{"v0", "v1", "v1", "v1"}, []string{"GET " + objPath, "PATCH " + objPath, "GET " + objPath}},
		{"reads with a query are not answered", true, []call{get(objPath + "?resourceVersion=0"), get(objPath + "?resourceVersion=0")},
			[]string{"v0", "v0"}, []string{"GET " + objPath + "?resourceVersion=0", "GET " + objPath + "?resourceVersion=0"}},
		{"another Accept is another read", true, []call{get(objPath), {http.MethodGet, objPath, "application/vnd.kubernetes.protobuf"}, get(objPath)},
			[]string{"v0", "v0", "v0"}, []string{"GET " + objPath, "GET " + objPath}},
		{"a NotFound is not remembered", true, []call{get("/api/v1/namespaces/ns/configmaps/absent"), get("/api/v1/namespaces/ns/configmaps/absent")},
			[]string{"v0", "v0"}, []string{"GET /api/v1/namespaces/ns/configmaps/absent", "GET /api/v1/namespaces/ns/configmaps/absent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := &objectServer{}
			answered := 0
			reads := NewRepeatedReads(func() { answered++ })
			rt := reads.Wrap(server)
			if tt.marked {
				reads.marks[objPath]++
				reads.marks["/api/v1/namespaces/ns/configmaps/absent"]++
			}
			var bodies []string
			for _, c := range tt.calls {
				bodies = append(bodies, send(t, rt, c.method, c.uri, c.accept))
			}
			if diff := cmp.Diff(tt.want, bodies); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
			sent := server.take()
			if diff := cmp.Diff(tt.sent, sent); diff != "" {
				t.Errorf("requests sent (-want +got):\n%s", diff)
			}
			if answered != len(tt.calls)-len(sent) {
				t.Errorf("answered %d reads locally, want %d", answered, len(tt.calls)-len(sent))
			}
		})
	}
}

func TestRepeatedReadsEndWithTheOperation(t *testing.T) {
	server := &objectServer{}
	reads := NewRepeatedReads(nil)
	rt := reads.Wrap(server)
	reads.marks[objPath]++ // two operations mark the object
	reads.marks[objPath]++
	send(t, rt, http.MethodGet, objPath, "")
	reads.Forget([]string{objPath})
	send(t, rt, http.MethodGet, objPath, "")
	reads.Forget([]string{objPath})
	send(t, rt, http.MethodGet, objPath, "")
	send(t, rt, http.MethodGet, objPath, "")
	want := []string{"GET " + objPath, "GET " + objPath, "GET " + objPath}
	if diff := cmp.Diff(want, server.take()); diff != "" {
		t.Errorf("requests sent (-want +got):\n%s", diff)
	}
	if len(reads.marks) != 0 || len(reads.seen) != 0 || len(reads.writes) != 0 {
		t.Errorf("left after the operations: marks %v, seen %d, writes %v", reads.marks, len(reads.seen), reads.writes)
	}
}

// TestReadDuringAWriteIsNotRemembered: a read sent before a write and
// answered after it may hold the object before the write; it is not used
// to answer the next read.
func TestReadDuringAWriteIsNotRemembered(t *testing.T) {
	entered := make(chan struct{})
	server := &objectServer{block: map[string]chan struct{}{objPath: entered}, unblock: make(chan struct{})}
	reads := NewRepeatedReads(nil)
	rt := reads.Wrap(server)
	reads.marks[objPath]++
	done := make(chan string)
	go func() {
		body, err := roundTrip(t.Context(), rt, http.MethodGet, objPath, "")
		if err != nil {
			body = err.Error()
		}
		done <- body
	}()
	<-entered
	server.mu.Lock()
	delete(server.block, objPath)
	server.mu.Unlock()
	send(t, rt, http.MethodPut, objPath, "")
	close(server.unblock)
	if got := <-done; got != "v0" {
		t.Errorf("read under way = %q, want v0", got)
	}
	if got := send(t, rt, http.MethodGet, objPath, ""); got != "v1" {
		t.Errorf("read after the write = %q, want v1 from the server", got)
	}
}

// TestReadUnderWayWhenTheOperationEndsIsNotRemembered: a read answered
// after its operation ended is not used by the next operation that marks
// the object.
func TestReadUnderWayWhenTheOperationEndsIsNotRemembered(t *testing.T) {
	entered := make(chan struct{})
	server := &objectServer{block: map[string]chan struct{}{objPath: entered}, unblock: make(chan struct{})}
	reads := NewRepeatedReads(nil)
	rt := reads.Wrap(server)
	reads.marks[objPath]++
	done := make(chan error)
	go func() {
		_, err := roundTrip(t.Context(), rt, http.MethodGet, objPath, "")
		done <- err
	}()
	<-entered
	server.mu.Lock()
	delete(server.block, objPath)
	server.mu.Unlock()
	reads.Forget([]string{objPath})
	reads.marks[objPath]++ // the next operation
	close(server.unblock)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	send(t, rt, http.MethodGet, objPath, "")
	if diff := cmp.Diff([]string{"GET " + objPath, "GET " + objPath}, server.take()); diff != "" {
		t.Errorf("requests sent (-want +got):\n%s", diff)
	}
}
