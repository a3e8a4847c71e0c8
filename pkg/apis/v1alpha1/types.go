package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Module is one module the operator discovered, cluster-scoped and named
// after it. The operator creates it and writes its status; users read it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mod,categories=addon-operator
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=".status.enabled"
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=".status.enabledBy",description="what decided whether the module is enabled"
// +kubebuilder:printcolumn:name="Revision",type=integer,JSONPath=".status.release.revision"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=".status.chartVersion",priority=1
// +kubebuilder:printcolumn:name="Last Run",type=date,JSONPath=".status.lastRunTime",priority=1
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=".status.attempts",priority=1,description="failed runs in a row"
// +kubebuilder:printcolumn:name="Next Retry",type=date,JSONPath=".status.nextRetryTime",priority=1
// +kubebuilder:printcolumn:name="Next Run",type=date,JSONPath=".status.nextRunTime",priority=1,description="when a schedule hook of the module runs next"
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=".status.lastError",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type Module struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Status ModuleStatus `json:"status,omitempty"`
}

// ReconcileRequestAnnotation on a Module asks for a run of its module
// now, ending a backoff: any new value does, as Flux's
// reconcile.fluxcd.io/requestedAt. The CLI's reconcile sets it to the
// time in RFC 3339; status.lastHandledReconcileAt takes the value once
// the run it asked for ended.
const ReconcileRequestAnnotation = "addon-operator.io/reconcile-requested-at"

// Phases of a Module.
const (
	PhaseDisabled    = "Disabled"
	PhasePending     = "Pending"
	PhaseReconciling = "Reconciling"
	PhaseReady       = "Ready"
	PhaseFailed      = "Failed"
	PhaseMaintenance = "Maintenance"
)

// Condition types, after the kstatus conventions that Flux, Argo CD and
// kubectl wait understand.
const (
	// ConditionReady is True when the module is enabled and its last run
	// succeeded.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the operator works towards the
	// module's desired state (waiting to run, running, uninstalling).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the last run failed; the operator
	// retries, and the message says why it failed.
	ConditionStalled = "Stalled"
)

// ModuleStatus is what the operator knows about a module.
type ModuleStatus struct {
	// Phase is one of the Phase constants.
	// +kubebuilder:validation:Enum=Disabled;Pending;Reconciling;Ready;Failed;Maintenance
	Phase string `json:"phase,omitempty"`
	// Enabled says whether the module is enabled.
	// +optional
	Enabled bool `json:"enabled"`
	// EnabledBy names the source that decided whether the module is
	// enabled (values.yaml, ConfigMap, enabled script...).
	EnabledBy string `json:"enabledBy,omitempty"`
	// Release is the module's Helm release, when it has one.
	Release *ReleaseStatus `json:"release,omitempty"`
	// ChartVersion is the version in the module's Chart.yaml.
	ChartVersion string `json:"chartVersion,omitempty"`
	// ValuesChecksum is the checksum of the values of the last Helm run.
	ValuesChecksum string `json:"valuesChecksum,omitempty"`
	// LastRunTime is when the last run ended; LastRunDuration how long it took.
	LastRunTime     *metav1.Time     `json:"lastRunTime,omitempty"`
	LastRunDuration *metav1.Duration `json:"lastRunDuration,omitempty"`
	// Attempts counts the module's failed runs in a row; absent after a
	// success.
	Attempts int `json:"attempts,omitempty"`
	// NextRetryTime is when a module whose run failed runs again, while
	// it backs off.
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`
	// NextRunTime is when the next of the schedule bindings of the
	// module's hooks fires; absent for a module without them, and until
	// its hooks are loaded by its first run.
	NextRunTime *metav1.Time `json:"nextRunTime,omitempty"`
	// LastHandledReconcileAt is the last value of the
	// addon-operator.io/reconcile-requested-at annotation that was
	// handled: the run it asked for ended (LastError and the conditions
	// say how), or the module was disabled and had nothing to run.
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// LastError is the error of the last failed run or delete, empty after
	// a success.
	LastError string `json:"lastError,omitempty"`
	// ObservedGeneration is the generation this status was written for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Ready, Reconciling and Stalled.
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ReleaseStatus names a module's Helm release.
type ReleaseStatus struct {
	// +optional
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision,omitempty"`
}

// ModuleConfig configures one module, named after it, or the global
// settings (named "global"), in the shape of Deckhouse's ModuleConfig.
// Used when the operator runs with --config-source=moduleconfig.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=mc,categories=addon-operator
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=".spec.enabled"
// +kubebuilder:printcolumn:name="Version",type=integer,JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=".status.message"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"
type ModuleConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ModuleConfigSpec `json:"spec,omitempty"`
	// +optional
	Status ModuleConfigStatus `json:"status,omitempty"`
}

// ModuleConfigSpec is a module's configuration: the ConfigMap's
// <moduleKey>Enabled and <moduleKey> keys.
//
// +kubebuilder:object:generate=false
type ModuleConfigSpec struct {
	// Enabled switches the module on or off; unset says nothing, as an
	// absent <moduleKey>Enabled key.
	Enabled *bool `json:"enabled,omitempty"`
	// Settings are the module's config values, checked against its
	// openapi/config-values.yaml.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Settings map[string]any `json:"settings,omitempty"`
	// Version is the version of the settings' schema; informational.
	Version int `json:"version,omitempty"`
	// Maintenance, NoResourceReconciliation, puts the module in
	// maintenance as a <moduleKey>Maintenance key does: its release is
	// neither upgraded, nor healed, nor reverted while its hooks run.
	// +kubebuilder:validation:Enum=NoResourceReconciliation
	Maintenance string `json:"maintenance,omitempty"`
}

// Condition types and reasons of a ModuleConfig.
const (
	// ReasonSettingsInUse: the settings are valid and in force.
	ReasonSettingsInUse = "SettingsInUse"
	// ReasonInvalidSettings: the settings were rejected; the last valid
	// ones of the object stay in force.
	ReasonInvalidSettings = "InvalidSettings"
	// ReasonUnknownModule: no module has the object's name.
	ReasonUnknownModule = "UnknownModule"
)

// ModuleConfigStatus says whether the spec is in use, and why not.
type ModuleConfigStatus struct {
	// Message is empty or "in use" when the spec is in force, otherwise why
	// not.
	Message            string `json:"message,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
