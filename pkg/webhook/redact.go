package webhook

import (
	admissionv1 "k8s.io/api/admission/v1"
)

// redactText returns text through Checks.Redact, as it is without one.
func (s *Server) redactText(text string) string {
	if s.checks.Redact == nil || text == "" {
		return text
	}
	return s.checks.Redact(text)
}

// redactAdmission redacts an admission answer's message and warnings.
func (s *Server) redactAdmission(resp *admissionv1.AdmissionResponse) {
	if resp == nil {
		return
	}
	if resp.Result != nil {
		resp.Result.Message = s.redactText(resp.Result.Message)
	}
	for i := range resp.Warnings {
		resp.Warnings[i] = s.redactText(resp.Warnings[i])
	}
}
