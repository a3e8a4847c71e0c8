package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// deadlineMargin is how much sooner than the API server a webhook run
// gives up, so that the operator's answer (an error: the failure policy
// applies) and its log line come before the API server's own timeout.
const deadlineMargin = 300 * time.Millisecond

// hookAdmission is what a hook writes to $VALIDATING_RESPONSE_PATH.
type hookAdmission struct {
	Allowed  *bool    `json:"allowed"`
	Message  string   `json:"message"`
	Warnings []string `json:"warnings"`
	// Patch is a base64-encoded JSON patch (mutating hooks only).
	Patch string `json:"patch"`
}

// errNoAnswer marks a run that gave no answer in time or could not run:
// the API server applies the webhook's failure policy.
var errNoAnswer = errors.New("no answer")

func (s *Server) serveAdmission(mutating bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		log := s.log.With(slog.String(logkey.Binding, name))
		body, review, err := readAdmissionReview(r)
		if err != nil {
			log.Warn("admission review rejected", logkey.Err(err))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		entry, ok := s.reg.admission(mutating, name)
		if !ok {
			log.Warn("admission review for a webhook not served here")
			http.Error(w, "webhook "+name+" is not served by this replica", http.StatusNotFound)
			return
		}
		log = log.With(slog.String(logkey.Module, entry.Owner), slog.String(logkey.Hook, entry.Hook))
		timeout := time.Duration(entry.Binding.TimeoutSeconds)*time.Second - deadlineMargin
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		typ := hook.TypeValidating
		if mutating {
			typ = hook.TypeMutating
		}
		resp, err := s.admit(ctx, entry, hook.BindingContext{Binding: name, Type: typ, Review: body}, log)
		if err != nil {
			log.Error("admission webhook gave no answer, the failure policy applies", logkey.Err(err))
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp.UID = review.Request.UID
		s.redactAdmission(resp)
		writeJSON(w, log, admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	}
}

// admit runs the hook within the concurrency bound and turns what it wrote
// into a response. A run that fails or answers nonsense denies with a
// short reason; one that times out returns errNoAnswer.
func (s *Server) admit(ctx context.Context, e Admission, bc hook.BindingContext, log *slog.Logger) (*admissionv1.AdmissionResponse, error) {
	res, err := s.runBounded(ctx, e.Run, bc)
	switch {
	case errors.Is(err, errNoAnswer):
		return nil, err
	case err != nil:
		log.Error("admission hook failed, denying", logkey.Err(err))
		return deny(fmt.Sprintf("hook %s failed; the operator's log has the details", e.Hook)), nil
	}
	resp, problem := parseAdmission(res.AdmissionResponse, e.Mutating)
	if problem != nil {
		log.Error("admission hook answered nonsense, denying", logkey.Err(problem))
		return deny(fmt.Sprintf("hook %s gave no valid answer: %v", e.Hook, short(problem))), nil
	}
	return resp, nil
}

// runBounded runs a hook once a run slot of the request's lane is free,
// both within ctx.
func (s *Server) runBounded(ctx context.Context, run RunFunc, bc hook.BindingContext) (*hook.Result, error) {
	sem := runSlots(ctx, s.sem)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waited for a free run slot: %w", errNoAnswer, ctx.Err())
	}
	defer func() { <-sem }()
	res, err := run(ctx, bc)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: %w", errNoAnswer, ctx.Err())
	}
	return res, err
}

// parseAdmission reads a hook's admission response.
func parseAdmission(data []byte, mutating bool) (*admissionv1.AdmissionResponse, error) {
	if len(data) == 0 {
		return nil, errors.New("empty response file")
	}
	var ha hookAdmission
	if err := json.Unmarshal(data, &ha); err != nil {
		return nil, fmt.Errorf("parse response: %w", err)
	}
	if ha.Allowed == nil {
		return nil, errors.New("response has no \"allowed\" field")
	}
	resp := &admissionv1.AdmissionResponse{Allowed: *ha.Allowed, Warnings: ha.Warnings}
	if !resp.Allowed {
		msg := ha.Message
		if msg == "" {
			msg = "denied by hook"
		}
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Message: msg, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden}
		return resp, nil
	}
	if ha.Patch == "" {
		return resp, nil
	}
	if !mutating {
		return nil, errors.New("a validating hook returned a patch")
	}
	patch, err := base64.StdEncoding.DecodeString(ha.Patch)
	if err != nil {
		return nil, fmt.Errorf("patch is not base64: %w", err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("patch is not a JSON patch array: %w", err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	return resp, nil
}

func deny(msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{
		Status: metav1.StatusFailure, Message: msg, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
	}}
}

// short cuts an error for the user's eyes; the log has all of it.
func short(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func readAdmissionReview(r *http.Request) ([]byte, *admissionv1.AdmissionReview, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
	if err != nil {
		return nil, nil, fmt.Errorf("read review: %w", err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, nil, fmt.Errorf("decode AdmissionReview: %w", err)
	}
	if review.Request == nil {
		return nil, nil, errors.New("AdmissionReview without request")
	}
	return body, &review, nil
}

func writeJSON(w http.ResponseWriter, log *slog.Logger, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		log.Error("encode webhook response", logkey.Err(err))
		http.Error(w, "encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}
