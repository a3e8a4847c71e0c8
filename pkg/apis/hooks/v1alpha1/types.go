// Package v1alpha1 holds the API types of the execution-hooks module,
// group hooks.addon-operator.io: ExecutionHook (commands run in selected
// containers before and after an operation) and ExecutionHookTemplate (the
// commands and policy a hook copies). The CRDs that serve them are in the
// module's crds/ directory; these types are how Go code reads and writes
// them.
package v1alpha1

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of the types.
const Group = "hooks.addon-operator.io"

// Version is the API version of the types.
const Version = "v1alpha1"

// Resources of the group.
const (
	ExecutionHooksResource         = "executionhooks"
	ExecutionHookTemplatesResource = "executionhooktemplates"
)

// Finalizer holds an ExecutionHook's deletion until its PostAction ran.
const Finalizer = Group + "/post-action"

// Condition types of an ExecutionHook's status.
const (
	// ConditionTemplateFound is False while executionHookTemplateName
	// names no template (reason TemplateNotFound) and True once the
	// template was copied (reason TemplateCopied).
	ConditionTemplateFound = "TemplateFound"
	// ConditionAuthorized is True when the requester may create pods/exec
	// on every pod an action is about to run in (reason ExecAllowed), and
	// False, with the pod and the missing right, when not (reasons
	// ExecForbidden, NoRequester, OperatorNamespace, OperatorRequester).
	ConditionAuthorized = "Authorized"
)

// MaxCapturedOutput bounds the output an action with captureOutput keeps
// in the status, in bytes.
const MaxCapturedOutput = 4096

// ExecutionHooksGVR is the resource of ExecutionHook.
func ExecutionHooksGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: ExecutionHooksResource}
}

// ExecutionHookTemplatesGVR is the resource of ExecutionHookTemplate.
func ExecutionHookTemplatesGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: ExecutionHookTemplatesResource}
}

// HookPolicy says on how many of the selected pods the actions run.
type HookPolicy string

const (
	// ExecuteOnce runs the actions in one selected pod only (its selected
	// containers), the first by name.
	ExecuteOnce HookPolicy = "ExecuteOnce"
	// ExecuteAll runs the actions in every selected pod. The default.
	ExecuteAll HookPolicy = "ExecuteAll"
)

// ExecutionHook asks for a PreAction command in selected containers when it
// is created and a PostAction command when it is deleted or expires.
type ExecutionHook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExecutionHookSpec   `json:"spec"`
	Status ExecutionHookStatus `json:"status,omitempty"`
}

// ExecutionHookSpec says where and what to run. Either the actions are
// given here, or executionHookTemplateName names a template in the same
// namespace whose policy, actions and expiration the controller copies
// into the spec before anything runs.
type ExecutionHookSpec struct {
	// PodContainerNamesList lists the pods and containers to run in. When
	// set, the selectors are ignored.
	PodContainerNamesList []PodContainerNames `json:"podContainerNamesList,omitempty"`
	// PodSelector selects pods of the hook's namespace by label.
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
	// ContainerSelector selects containers of the selected pods by name:
	// the values of the map are container names (the keys are free, e.g.
	// containerName). Empty: every container of the pod.
	ContainerSelector map[string]string `json:"containerSelector,omitempty"`
	// ExecutionHookTemplateName names the template to copy from.
	ExecutionHookTemplateName string `json:"executionHookTemplateName,omitempty"`
	// Requester is the user who created the hook or last changed it,
	// recorded by the module's admission webhook from the API server's
	// request (whatever a client sends is overwritten, and a value other
	// than the requester's is refused). Actions run only in pods where
	// this user may create pods/exec; a hook without it runs nothing.
	Requester *authenticationv1.UserInfo `json:"requester,omitempty"`

	ExecutionHookTemplateSpec `json:",inline"`
}

// ExecutionHookTemplateSpec is what a template holds and a hook copies.
type ExecutionHookTemplateSpec struct {
	// Policy is ExecuteOnce or ExecuteAll (the default).
	Policy HookPolicy `json:"policy,omitempty"`
	// PreAction runs when the hook is created.
	PreAction *ExecutionHookAction `json:"preAction,omitempty"`
	// PostAction runs when the hook is deleted or expires.
	PostAction *ExecutionHookAction `json:"postAction,omitempty"`
	// ExpirationSeconds after the first PreAction started, the PostAction
	// runs even if nobody deleted the hook.
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// PodContainerNames names one pod and some of its containers (empty: all).
type PodContainerNames struct {
	PodName        string   `json:"podName"`
	ContainerNames []string `json:"containerNames,omitempty"`
}

// ExecutionHookAction is a command and how long it may take.
type ExecutionHookAction struct {
	// Exec is the command, run without a shell (as a container's exec
	// probe is).
	Exec ExecAction `json:"exec"`
	// ActionTimeoutSeconds bounds one run in one container; the
	// controller's default applies when unset.
	ActionTimeoutSeconds *int64 `json:"actionTimeoutSeconds,omitempty"`
	// CaptureOutput keeps the end of the command's output (stdout and
	// stderr, at most MaxCapturedOutput bytes) in the container's status,
	// where whoever may read the hook reads it. Unset, the output is
	// discarded: it is never in the status, Events or logs.
	CaptureOutput bool `json:"captureOutput,omitempty"`
}

// ExecAction is a command line.
type ExecAction struct {
	Command []string `json:"command"`
}

// ExecutionHookStatus is the state of the hook in every selected container
// and the summaries. A summary is unset until the action has a final result
// in every container, then true only if it succeeded in all of them.
type ExecutionHookStatus struct {
	ContainerExecutionHookStatuses []ContainerExecutionHookStatus `json:"containerExecutionHookStatuses,omitempty"`
	PreActionSucceed               *bool                          `json:"preActionSucceed,omitempty"`
	PostActionSucceed              *bool                          `json:"postActionSucceed,omitempty"`
	// Containers counts the selected containers, for printer columns.
	Containers int `json:"containers,omitempty"`
	// Message says why the hook cannot run (no template, nothing
	// selected, not authorized), when that is the case.
	Message string `json:"message,omitempty"`
	// Template holds the policy, actions and expiration copied once from
	// executionHookTemplateName; they run when spec.preAction is unset.
	// Only the controller writes it (the status subresource), so copying
	// the template changes neither the spec nor its recorded requester.
	Template *ExecutionHookTemplateSpec `json:"template,omitempty"`
	// Conditions are TemplateFound and Authorized.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ContainerExecutionHookStatus is the state of the hook in one container.
type ContainerExecutionHookStatus struct {
	PodName          string                     `json:"podName"`
	ContainerName    string                     `json:"containerName"`
	PreActionStatus  *ExecutionHookActionStatus `json:"preActionStatus,omitempty"`
	PostActionStatus *ExecutionHookActionStatus `json:"postActionStatus,omitempty"`
}

// ExecutionHookActionStatus is one action in one container. ActionTimestamp
// is written before the command starts: set with ActionSucceed unset means
// the action started and its result is not known.
type ExecutionHookActionStatus struct {
	ActionTimestamp *metav1.Time `json:"actionTimestamp,omitempty"`
	ActionSucceed   *bool        `json:"actionSucceed,omitempty"`
	Error           *HookError   `json:"error,omitempty"`
	// Output is the end of the command's output, only when the action
	// has captureOutput.
	Output string `json:"output,omitempty"`
}

// HookError is the last error of an action in a container.
type HookError struct {
	Time    metav1.Time `json:"time"`
	Message string      `json:"message"`
}

// ExecutionHookTemplate holds commands and a policy for hooks to copy.
type ExecutionHookTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	ExecutionHookTemplateSpec `json:",inline"`
}
