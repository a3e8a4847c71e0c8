// Package v1alpha1 holds the API types of the execution-hooks module,
// group hooks.addon-operator.io: ExecutionHook (commands run in selected
// containers before and after an operation) and ExecutionHookTemplate (the
// commands and policy a hook copies). The CRDs that serve them are in the
// module's crds/ directory, generated from these types' kubebuilder markers
// by controller-gen (make generate), as is zz_generated.deepcopy.go; these
// types are how Go code reads and writes them.
//
// +kubebuilder:object:generate=true
// +groupName=hooks.addon-operator.io
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

// HookPolicy says on how many of the selected pods the actions run:
// ExecuteOnce in one selected pod (the first by name), ExecuteAll in all.
//
// +kubebuilder:validation:Enum=ExecuteOnce;ExecuteAll
type HookPolicy string

const (
	// ExecuteOnce runs the actions in one selected pod only (its selected
	// containers), the first by name.
	ExecuteOnce HookPolicy = "ExecuteOnce"
	// ExecuteAll runs the actions in every selected pod. The default.
	ExecuteAll HookPolicy = "ExecuteAll"
)

// ExecutionHook asks for a PreAction command in selected containers when it
// is created and a PostAction command when it is deleted or expires (e.g.
// freeze and thaw an application around a volume snapshot).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=eh,categories=executionhooks
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=".spec.executionHookTemplateName"
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=".spec.policy"
// +kubebuilder:printcolumn:name="Containers",type=integer,JSONPath=".status.containers"
// +kubebuilder:printcolumn:name="PreAction",type=boolean,JSONPath=".status.preActionSucceed"
// +kubebuilder:printcolumn:name="PostAction",type=boolean,JSONPath=".status.postActionSucceed"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=".status.message",priority=1
// +kubebuilder:printcolumn:name="Requester",type=string,JSONPath=".spec.requester.username",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ExecutionHook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExecutionHookSpec `json:"spec"`
	// +optional
	Status ExecutionHookStatus `json:"status,omitempty"`
}

// ExecutionHookSpec says where and what to run. Either the actions are
// given here, or executionHookTemplateName names a template in the same
// namespace whose policy, actions and expiration the controller copies
// into the spec before anything runs.
//
// +kubebuilder:validation:XValidation:rule="has(self.preAction) || has(self.executionHookTemplateName)",message="set preAction or executionHookTemplateName"
// +kubebuilder:validation:XValidation:rule="has(self.podContainerNamesList) || has(self.podSelector)",message="select containers with podContainerNamesList or podSelector"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.preAction) || (has(self.preAction) && self.preAction == oldSelf.preAction)",message="preAction is immutable once set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.podContainerNamesList) || (has(self.podContainerNamesList) && self.podContainerNamesList == oldSelf.podContainerNamesList)",message="podContainerNamesList is immutable"
type ExecutionHookSpec struct {
	// PodContainerNamesList lists the pods and containers to run in. When
	// set, the selectors are ignored.
	// +kubebuilder:validation:MinItems=1
	PodContainerNamesList []PodContainerNames `json:"podContainerNamesList,omitempty"`
	// PodSelector selects pods of the hook's namespace by label.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="a matchExpressions operator is In, NotIn, Exists or DoesNotExist"
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
	// +kubebuilder:validation:Minimum=1
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
}

// PodContainerNames names one pod and some of its containers (empty: all).
type PodContainerNames struct {
	// +kubebuilder:validation:MinLength=1
	PodName string `json:"podName"`
	// ContainerNames are the pod's containers to run in; empty means all.
	// +kubebuilder:validation:items:MinLength=1
	ContainerNames []string `json:"containerNames,omitempty"`
}

// ExecutionHookAction is a command and how long it may take.
type ExecutionHookAction struct {
	// Exec is the command, run without a shell (as a container's exec
	// probe is).
	Exec ExecAction `json:"exec"`
	// ActionTimeoutSeconds bounds one run in one container; the
	// controller's default applies when unset.
	// +kubebuilder:validation:Minimum=1
	ActionTimeoutSeconds *int64 `json:"actionTimeoutSeconds,omitempty"`
	// CaptureOutput keeps the end of the command's output (stdout and
	// stderr, at most MaxCapturedOutput bytes) in the container's status,
	// where whoever may read the hook reads it. Unset, the output is
	// discarded: it is never in the status, Events or logs.
	CaptureOutput bool `json:"captureOutput,omitempty"`
}

// ExecAction is a command line.
type ExecAction struct {
	// Command is the command line, run without a shell.
	// +kubebuilder:validation:MinItems=1
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
	// Conditions are TemplateFound (False while the named template is
	// missing) and Authorized (False, naming the pod and the missing right,
	// when the requester may not create pods/exec where an action would
	// run).
	// +listType=map
	// +listMapKey=type
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
	// +optional
	Time metav1.Time `json:"time"`
	// +optional
	Message string `json:"message"`
}

// ExecutionHookTemplate holds the commands and policy that ExecutionHooks
// naming it copy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=eht,categories=executionhooks
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=".policy"
// +kubebuilder:printcolumn:name="PreAction",type=string,JSONPath=".preAction.exec.command"
// +kubebuilder:printcolumn:name="PostAction",type=string,JSONPath=".postAction.exec.command"
// +kubebuilder:printcolumn:name="Expiration",type=integer,JSONPath=".expirationSeconds"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="has(self.preAction)",message="preAction is required"
type ExecutionHookTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	ExecutionHookTemplateSpec `json:",inline"`
}
