package webhook

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// ConfigWrite is one write to a ModuleConfig or to the operator's
// ConfigMap, with who makes it; Old is the stored object (nil on CREATE),
// New the object to store (nil on DELETE), both as JSON.
type ConfigWrite struct {
	Operation string
	User      string
	Groups    []string
	Old, New  []byte
}

// ConfigWriteCheck checks a guarded write: err is the reason to deny it.
type ConfigWriteCheck func(ConfigWrite) error

// WriteGuard holds the checks of writes to the configuration by writer and by
// what they disable: of ModuleConfig objects and of the operator's
// ConfigMap.
type WriteGuard struct {
	ModuleConfig ConfigWriteCheck
	ConfigMap    ConfigWriteCheck
}

// The guard's webhook entries and where the server answers for them.
const (
	moduleConfigWriteGuard     = "moduleconfig-guard.addon-operator.io"
	configMapWriteGuard        = "configmap-guard.addon-operator.io" //nolint:gosec // G101: a webhook's name, no credential
	moduleConfigWriteGuardPath = "/guard/moduleconfig"
	configMapWriteGuardPath    = "/guard/configmap" //nolint:gosec // G101: a URL path, no credential
)

// namespaceControllerUser deletes every object of a namespace being deleted;
// the ConfigMap guard lets it, even while the operator (in that same
// namespace) is gone.
const namespaceControllerUser = "system:serviceaccount:kube-system:namespace-controller"

// guardsWrites reports whether the server was given a guard of writes to
// the configuration: the configurations then register its two webhooks,
// with failurePolicy Fail, for CREATE, UPDATE and DELETE. Without one
// nothing is guarded.
func (s *Server) guardsWrites() bool { return s.checks.WriteGuard != nil }

// serveWriteGuard answers a guarded write with check.
func (s *Server) serveWriteGuard(name string, check func(WriteGuard) ConfigWriteCheck) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		log := s.log.With(slog.String(logkey.Binding, name))
		_, review, err := readAdmissionReview(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g := s.checks.WriteGuard
		if g == nil || check(*g) == nil {
			http.Error(w, "guard not ready", http.StatusServiceUnavailable)
			return
		}
		req := review.Request
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		write := ConfigWrite{Operation: string(req.Operation), User: req.UserInfo.Username, Groups: req.UserInfo.Groups,
			Old: req.OldObject.Raw, New: req.Object.Raw}
		if req.Operation == admissionv1.Delete {
			write.New = nil
		}
		if err := check(*g)(write); err != nil {
			log.Info("write to the configuration refused", slog.String(logkey.Kind, req.Kind.Kind), slog.String(logkey.Name, req.Name),
				slog.String(logkey.User, req.UserInfo.Username), logkey.Err(err))
			resp = deny(strings.ReplaceAll(err.Error(), "\n", "; "))
			resp.UID = req.UID
		}
		writeJSON(w, log, admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	}
}

// writeGuardWebhooks are the guard's entries: always failurePolicy Fail, so
// that no write the guard would refuse is stored while the operator does
// not answer.
func (c *configurer) writeGuardWebhooks(bundle []byte) []admissionregv1.ValidatingWebhook {
	ops := []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update, admissionregv1.Delete}
	entry := func(name, path string, rule admissionregv1.Rule) admissionregv1.ValidatingWebhook {
		return admissionregv1.ValidatingWebhook{
			Name: name, ClientConfig: c.clientConfig(path, bundle),
			Rules:         []admissionregv1.RuleWithOperations{{Operations: ops, Rule: rule}},
			FailurePolicy: ptr.To(admissionregv1.Fail), SideEffects: ptr.To(admissionregv1.SideEffectClassNone), TimeoutSeconds: ptr.To(int32(5)),
			MatchPolicy: ptr.To(admissionregv1.Equivalent), AdmissionReviewVersions: []string{"v1"},
		}
	}
	mc := entry(moduleConfigWriteGuard, moduleConfigWriteGuardPath, admissionregv1.Rule{APIGroups: []string{"addon-operator.io"}, APIVersions: []string{"*"},
		Resources: []string{"moduleconfigs"}, Scope: ptr.To(admissionregv1.ClusterScope)})
	cm := entry(configMapWriteGuard, configMapWriteGuardPath, admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
		Resources: []string{"configmaps"}, Scope: ptr.To(admissionregv1.NamespacedScope)})
	cm.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": c.opts.Namespace}}
	// request.name, not object.metadata.name: object is null on DELETE.
	cm.MatchConditions = []admissionregv1.MatchCondition{
		{Name: "operator-configmap", Expression: fmt.Sprintf("request.name == %q", c.opts.ConfigMapName)},
		{Name: "not-namespace-deletion", Expression: fmt.Sprintf("request.userInfo.username != %q", namespaceControllerUser)},
	}
	return []admissionregv1.ValidatingWebhook{mc, cm}
}
