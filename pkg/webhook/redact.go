package webhook

import (
	admissionv1 "k8s.io/api/admission/v1"
)

// SetRedactor makes every answer's message and warnings pass through
// redact (*redact.Redactor.String): a hook's or a check's refusal may
// quote a Secret's value, and the API server shows it to whoever wrote
// the object. Until it is set, answers are sent as they are.
func (s *Server) SetRedactor(redact func(string) string) { s.redactor.Store(&redact) }

// redactText returns text through the redactor, as it is without one.
func (s *Server) redactText(text string) string {
	r := s.redactor.Load()
	if r == nil || text == "" {
		return text
	}
	return (*r)(text)
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
