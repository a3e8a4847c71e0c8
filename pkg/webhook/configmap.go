package webhook

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// configMapWebhookName is the webhook entry that checks the operator's
// ConfigMap.
const configMapWebhookName = "configmap.addon-operator.io" //nolint:gosec // G101: a webhook's name, no credential

// serveConfigMap checks the ConfigMap of an admission request with the
// operator's own parse and schema validation: what it would reject later
// is rejected now, so nothing invalid is stored.
func (s *Server) serveConfigMap(w http.ResponseWriter, r *http.Request) {
	log := s.log.With(slog.String(logkey.Binding, configMapWebhookName))
	_, review, err := readAdmissionReview(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	check := s.checks.ConfigMap
	if check == nil {
		http.Error(w, "ConfigMap check not ready", http.StatusServiceUnavailable)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(review.Request.Object.Raw, &cm); err != nil {
		resp = deny("decode ConfigMap: " + err.Error())
	} else if warnings, err := check(cm.Data); err != nil {
		resp = deny(strings.ReplaceAll(err.Error(), "\n", "; "))
		resp.Warnings = warnings
	} else {
		resp.Warnings = warnings
	}
	resp.UID = review.Request.UID
	if !resp.Allowed {
		resp.Result.Reason = metav1.StatusReasonInvalid
		resp.Result.Code = http.StatusUnprocessableEntity
	}
	s.redactAdmission(resp)
	writeJSON(w, log, admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}
