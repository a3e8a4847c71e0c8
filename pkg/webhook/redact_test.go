package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// TestAnswersAreRedacted: a hook's refusal and warnings that quote a
// secret reach the API server with the marker instead.
func TestAnswersAreRedacted(t *testing.T) {
	const secret = "s3cr3t-token-value"
	s := newCheckingServer(t, 1, Checks{Redact: func(text string) string { return strings.ReplaceAll(text, secret, "[redacted]") }})
	answer := `{"allowed": false, "message": "token ` + secret + ` is revoked", "warnings": ["saw ` + secret + `"]}`
	err := s.reg.set("mod", Entries{Admission: []Admission{{
		Owner: "mod", Hook: "hooks/deny", Binding: hook.AdmissionBinding{Name: "deny.example.com", TimeoutSeconds: 10},
		Run: func(context.Context, hook.BindingContext) (*hook.Result, error) {
			return &hook.Result{AdmissionResponse: []byte(answer)}, nil
		},
	}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	code, body := post(t, s, "/validate/deny.example.com", admissionReview(t, "1"))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), secret) {
		t.Errorf("the answer shows the secret: %s", body)
	}
	if review.Response == nil || review.Response.Result == nil || review.Response.Result.Message != "token [redacted] is revoked" {
		t.Errorf("response = %s", body)
	}
}
