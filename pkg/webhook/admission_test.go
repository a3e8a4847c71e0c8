package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

func TestParseAdmission(t *testing.T) {
	patch := `[{"op":"add","path":"/metadata/labels/x","value":"y"}]`
	tests := []struct {
		name     string
		data     string
		mutating bool
		want     *admissionv1.AdmissionResponse
		wantErr  string
	}{
		{name: "allowed", data: `{"allowed": true}`, want: &admissionv1.AdmissionResponse{Allowed: true}},
		{name: "allowed with warnings", data: `{"allowed": true, "warnings": ["w"]}`, want: &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"w"}}},
		{
			name: "denied", data: `{"allowed": false, "message": "replicas must be odd"}`,
			want: &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: "Failure", Message: "replicas must be odd", Reason: "Forbidden", Code: 403}},
		},
		{
			name: "patch", mutating: true, data: `{"allowed": true, "patch": "` + base64.StdEncoding.EncodeToString([]byte(patch)) + `"}`,
			want: &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptrTo(admissionv1.PatchTypeJSONPatch)},
		},
		{name: "empty", data: ``, wantErr: "empty response file"},
		{name: "not json", data: `allowed`, wantErr: "parse response: invalid character 'a' looking for beginning of value"},
		{name: "no allowed", data: `{"message": "x"}`, wantErr: `response has no "allowed" field`},
		{name: "patch from validating", data: `{"allowed": true, "patch": "W10="}`, wantErr: "a validating hook returned a patch"},
		{name: "patch not base64", mutating: true, data: `{"allowed": true, "patch": "[]"}`, wantErr: "patch is not base64: illegal base64 data at input byte 0"},
		{name: "patch not array", mutating: true, data: `{"allowed": true, "patch": "e30="}`, wantErr: "patch is not a JSON patch array: json: cannot unmarshal object into Go value of type []map[string]interface {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAdmission([]byte(tt.data), tt.mutating)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// newTestServer is a server whose handlers are called directly, without
// TLS or configurations.
func newTestServer(t *testing.T, maxRuns int) *Server {
	t.Helper()
	return newCheckingServer(t, maxRuns, Checks{})
}

// newCheckingServer is newTestServer answering with checks.
func newCheckingServer(t *testing.T, maxRuns int, checks Checks) *Server {
	t.Helper()
	opts := DefaultOptions()
	opts.MaxConcurrentRuns = maxRuns
	return New(opts, Clients{Kube: fake.NewClientset()}, checks, clocktesting.NewFakeClock(time.Now()), slog.New(slog.DiscardHandler))
}

func admissionReview(t *testing.T, uid string) []byte {
	t.Helper()
	data, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &admissionv1.AdmissionRequest{UID: k8stypes.UID("uid-" + uid), Object: runtime.RawExtension{Raw: []byte(`{"kind":"Thing"}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func post(t *testing.T, s *Server, path string, body []byte) (int, []byte) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

func TestServeAdmission(t *testing.T) {
	var seen hook.BindingContext
	answer := func(resp string, err error) RunFunc {
		return func(_ context.Context, bc hook.BindingContext) (*hook.Result, error) {
			seen = bc
			if err != nil {
				return nil, err
			}
			return &hook.Result{AdmissionResponse: []byte(resp)}, nil
		}
	}
	hang := func(ctx context.Context, _ hook.BindingContext) (*hook.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	binding := func(name string, timeout int32) hook.AdmissionBinding {
		return hook.AdmissionBinding{Name: name, TimeoutSeconds: timeout}
	}
	s := newTestServer(t, 2)
	err := s.reg.set("mod", Entries{Admission: []Admission{
		{Owner: "mod", Hook: "hooks/deny", Binding: binding("deny.example.com", 10), Run: answer(`{"allowed": false, "message": "no"}`, nil)},
		{Owner: "mod", Hook: "hooks/empty", Binding: binding("empty.example.com", 10), Run: answer(``, nil)},
		{Owner: "mod", Hook: "hooks/fails", Binding: binding("fails.example.com", 10), Run: answer(``, errors.New("exit status 1"))},
		{Owner: "mod", Hook: "hooks/hang", Binding: binding("hang.example.com", 1), Run: hang},
	}}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		wantCode int
		wantMsg  string
	}{
		{path: "/validate/deny.example.com", wantCode: 200, wantMsg: "no"},
		{path: "/validate/empty.example.com", wantCode: 200, wantMsg: "hook hooks/empty gave no valid answer: empty response file"},
		{path: "/validate/fails.example.com", wantCode: 200, wantMsg: "hook hooks/fails failed; the operator's log has the details"},
		{path: "/validate/hang.example.com", wantCode: 500},
		{path: "/validate/unknown.example.com", wantCode: 404},
		{path: "/mutate/deny.example.com", wantCode: 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := post(t, s, tt.path, admissionReview(t, "1"))
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", code, tt.wantCode, body)
			}
			if code != 200 {
				return
			}
			var review admissionv1.AdmissionReview
			if err := json.Unmarshal(body, &review); err != nil {
				t.Fatal(err)
			}
			if review.Response.UID != "uid-1" || review.Response.Allowed {
				t.Errorf("response uid %q allowed %v, want uid-1 denied", review.Response.UID, review.Response.Allowed)
			}
			if got := review.Response.Result.Message; got != tt.wantMsg {
				t.Errorf("message %q, want %q", got, tt.wantMsg)
			}
		})
	}
	post(t, s, "/validate/deny.example.com", admissionReview(t, "2"))
	if seen.Type != hook.TypeValidating || seen.Binding != "deny.example.com" || !bytes.Contains(seen.Review, []byte(`"uid":"uid-2"`)) {
		t.Errorf("binding context %+v, want a Validating context with the review", seen)
	}
}

func TestRunBoundedWaitsForASlot(t *testing.T) {
	s := newTestServer(t, 1)
	release := make(chan struct{})
	started := make(chan struct{})
	block := func(ctx context.Context, _ hook.BindingContext) (*hook.Result, error) {
		close(started)
		select {
		case <-release:
			return &hook.Result{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.runBounded(t.Context(), block, hook.BindingContext{})
		done <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.runBounded(ctx, block, hook.BindingContext{}); !errors.Is(err, errNoAnswer) {
		t.Errorf("second run with the only slot taken: %v, want errNoAnswer", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("first run: %v", err)
	}
}
