package executionhook

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// Authorizer decides whether a user may create pods/exec on one pod, as
// the API server's authorizer would decide a request of that user. A
// denial is (false, reason, nil); reason may be empty.
type Authorizer interface {
	CanExec(ctx context.Context, user authenticationv1.UserInfo, namespace, pod string) (allowed bool, reason string, err error)
}

// SubjectAccessReviews is the Authorizer of the API server: one
// SubjectAccessReview per question.
type SubjectAccessReviews struct {
	client kubernetes.Interface
}

// NewSubjectAccessReviews returns an Authorizer asking the API server of
// client.
func NewSubjectAccessReviews(client kubernetes.Interface) *SubjectAccessReviews {
	return &SubjectAccessReviews{client: client}
}

// CanExec asks whether user may create pods/exec on the pod.
func (s *SubjectAccessReviews) CanExec(ctx context.Context, user authenticationv1.UserInfo, namespace, pod string) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "create", Resource: "pods", Subresource: "exec", Name: pod,
		},
	}}
	out, err := s.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("review pods/exec on %s/%s for %q: %w", namespace, pod, user.Username, err)
	}
	return out.Status.Allowed && !out.Status.Denied, out.Status.Reason, nil
}

// Reasons of the Authorized condition.
const (
	reasonExecAllowed       = "ExecAllowed"
	reasonExecForbidden     = "ExecForbidden"
	reasonNoRequester       = "NoRequester"
	reasonOperatorNamespace = "OperatorNamespace"
	reasonOperatorRequester = "OperatorRequester"
)

// refusal is why a hook may not run at all, whatever its pods: the
// operator's namespace is never a target (its pods hold the operator's
// and the controller's tokens), a hook nobody is recorded for runs
// nothing, and the operator's own ServiceAccounts never lend their
// rights. It returns the condition's reason and message, or "" when the
// hook may go on to the per-pod check.
func refusal(hook *hooksv1.ExecutionHook, operatorNamespace string) (reason, msg string) {
	switch {
	case operatorNamespace != "" && hook.Namespace == operatorNamespace:
		return reasonOperatorNamespace, fmt.Sprintf("namespace %s is the operator's: ExecutionHooks never run there", hook.Namespace)
	case hook.Spec.Requester == nil || hook.Spec.Requester.Username == "":
		return reasonNoRequester, "spec.requester is not recorded (the module's admission webhook was not serving when the hook was written): the hook runs nothing"
	case operatorNamespace != "" && strings.HasPrefix(hook.Spec.Requester.Username, "system:serviceaccount:"+operatorNamespace+":"):
		return reasonOperatorRequester, fmt.Sprintf("requester %q is a ServiceAccount of the operator's namespace: its rights are not lent to ExecutionHooks", hook.Spec.Requester.Username)
	}
	return "", ""
}

// authorize checks that the hook may run in every pod of pods: the
// refusal above, then a SubjectAccessReview for the requester on each pod.
// It returns the reason and message of the Authorized condition, and
// whether the hook may run.
func (c *Controller) authorize(ctx context.Context, hook *hooksv1.ExecutionHook, pods []string) (reason, msg string, ok bool, err error) {
	if reason, msg := refusal(hook, c.opts.OperatorNamespace); reason != "" {
		return reason, msg, false, nil
	}
	user := *hook.Spec.Requester
	for _, pod := range pods {
		allowed, why, err := c.access.CanExec(ctx, user, hook.Namespace, pod)
		if err != nil {
			return "", "", false, err
		}
		if !allowed {
			msg := fmt.Sprintf("requester %q may not create pods/exec on pod %s in namespace %s", user.Username, pod, hook.Namespace)
			if why != "" {
				msg += ": " + why
			}
			return reasonExecForbidden, msg, false, nil
		}
	}
	return reasonExecAllowed, fmt.Sprintf("requester %q may create pods/exec on every selected pod", user.Username), true, nil
}
