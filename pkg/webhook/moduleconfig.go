package webhook

import (
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ModuleConfigCheck checks a ModuleConfig object, as JSON: err is the
// reason to deny it.
type ModuleConfigCheck func(object []byte) error

// moduleConfigWebhookName is the webhook entry that checks ModuleConfig
// objects.
const moduleConfigWebhookName = "moduleconfig.addon-operator.io"

// moduleConfigPath is where the server answers for ModuleConfig objects.
const moduleConfigPath = "/moduleconfig"

func (s *Server) checksModuleConfigs() bool {
	return s.opts.ConfigMapValidation && s.checks.ModuleConfig != nil
}

// serveModuleConfig checks the ModuleConfig of an admission request with
// the operator's own check of the object, so settings its module's schema
// rejects are never stored.
func (s *Server) serveModuleConfig(w http.ResponseWriter, r *http.Request) {
	log := s.log.With(slog.String(logkey.Binding, moduleConfigWebhookName))
	_, review, err := readAdmissionReview(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	check := s.checks.ModuleConfig
	if check == nil {
		http.Error(w, "ModuleConfig check not ready", http.StatusServiceUnavailable)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if err := check(review.Request.Object.Raw); err != nil {
		resp = deny(strings.ReplaceAll(err.Error(), "\n", "; "))
		resp.UID = review.Request.UID
		resp.Result.Reason = metav1.StatusReasonInvalid
		resp.Result.Code = http.StatusUnprocessableEntity
	}
	s.redactAdmission(resp)
	writeJSON(w, log, admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// moduleConfigWebhook checks every ModuleConfig object, with the failure
// policy of the ConfigMap's check.
func (c *configurer) moduleConfigWebhook(bundle []byte) admissionregv1.ValidatingWebhook {
	policy := admissionregv1.FailurePolicyType(c.opts.ConfigMapFailurePolicy)
	return admissionregv1.ValidatingWebhook{
		Name: moduleConfigWebhookName, ClientConfig: c.clientConfig(moduleConfigPath, bundle),
		Rules: []admissionregv1.RuleWithOperations{{
			Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
			Rule: admissionregv1.Rule{APIGroups: []string{"addon-operator.io"}, APIVersions: []string{"*"}, Resources: []string{"moduleconfigs"},
				Scope: ptr.To(admissionregv1.ClusterScope)},
		}},
		FailurePolicy: &policy, SideEffects: ptr.To(admissionregv1.SideEffectClassNone), TimeoutSeconds: ptr.To(int32(5)),
		MatchPolicy: ptr.To(admissionregv1.Equivalent), AdmissionReviewVersions: []string{"v1"},
	}
}
