// Package status holds the operator's state as its status page, debug
// API and debug CLI show it: the wire types that the operator produces and
// the server serves, so that neither has to import the other.
package status

import "time"

// Source names what decided a module's enabled state.
type Source string

// Sources, in the order they are consulted; a later one overrides an earlier
// one, except that the enabled script may only disable.
const (
	SourceDefault       Source = "default"        // nothing said anything: disabled
	SourceStaticCommon  Source = "static"         // modules/values.yaml
	SourceStaticModule  Source = "module-values"  // the module's own values.yaml
	SourceDynamic       Source = "global-hook"    // a global hook's /<key>Enabled patch
	SourceConfigMap     Source = "configmap"      // the ConfigMap's <key>Enabled
	SourceEnabledScript Source = "enabled-script" // the module's enabled script
	SourceRequirement   Source = "requirement"    // a module it requires is disabled
	// SourceExclusiveGroup: another module of its module.yaml
	// exclusiveGroup is enabled.
	SourceExclusiveGroup Source = "exclusive-group"
)

// Phase is a module's place in its lifecycle, for status pages.
type Phase string

// Phases.
const (
	PhaseDisabled Phase = "Disabled"
	PhaseWaiting  Phase = "Waiting"  // enabled, its run not done yet
	PhaseRunning  Phase = "Running"  // a run or delete is in progress
	PhaseReady    Phase = "Ready"    // the last run succeeded
	PhaseFailed   Phase = "Failed"   // the last run failed; it is retried unless the error is permanent
	PhaseDeleting Phase = "Deleting" // being uninstalled
)

// ModuleStatus is a module's state.
type ModuleStatus struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	By      Source `json:"decidedBy"`
	// Reason says in words what decided: the flag and where it is set, or
	// what the enabled script wrote to MODULE_ENABLED_REASON.
	Reason    string `json:"reason,omitempty"`
	Phase     Phase  `json:"phase"`
	Revision  int    `json:"revision,omitempty"`
	LastError string `json:"lastError,omitempty"`
	// Message says what the module waits for (modules it requires, a
	// release object not ready yet) or why it is disabled although its
	// sources enable it.
	Message string `json:"message,omitempty"`
	// Namespace is its release's namespace; Version, Description and
	// Requires come from its module.yaml.
	Namespace   string   `json:"namespace,omitempty"`
	Version     string   `json:"version,omitempty"`
	Description string   `json:"description,omitempty"`
	Requires    []string `json:"requires,omitempty"`
	// Critical, Stage, Tags, Subsystems and ExclusiveGroup come from
	// Deckhouse's module.yaml fields; Warnings list what the operator
	// ignored in it (unknown fields, Deckhouse's own).
	Critical       bool     `json:"critical,omitempty"`
	Stage          string   `json:"stage,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Subsystems     []string `json:"subsystems,omitempty"`
	ExclusiveGroup string   `json:"exclusiveGroup,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	// Maintenance is set while the module is in maintenance: its release
	// is left as it is, neither upgraded, nor healed, nor reverted.
	Maintenance bool `json:"maintenance,omitempty"`
	// Remediation says how the module's failed release was last put back
	// into a working state (rolled back or uninstalled) while its new
	// revision keeps being retried; empty once a deployment succeeded.
	Remediation string `json:"remediation,omitempty"`
}

// QueueStatus is one queue as status pages and the debug CLI show it.
type QueueStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Tasks lists the running task first, then the queued ones.
	Tasks []TaskStatus `json:"tasks"`
}

// TaskStatus is one task of a queue.
type TaskStatus struct {
	Description string    `json:"description"`
	Queued      time.Time `json:"queued"`
	Failures    int       `json:"failures,omitempty"`
	LastError   string    `json:"lastError,omitempty"`
}

// Condition is something wrong that the operator works around while it goes
// on working: the status page shows each as a banner and /readyz names it in
// its body.
type Condition struct {
	// Type is a stable CamelCase name, such as ConfigMapMissing.
	Type string `json:"type"`
	// Reason is a stable CamelCase cause within the type, if it has any,
	// such as ConfigMapMissing for ConfigHeld.
	Reason string `json:"reason,omitempty"`
	// Message says what happened, what the operator does about it and
	// what ends it.
	Message string `json:"message"`
	// Since is when the condition began.
	Since time.Time `json:"since"`
	// Keys lists the ConfigMap keys the condition is about, if any.
	Keys []string `json:"keys,omitempty"`
	// Releases lists the Helm releases the condition is about, if any.
	Releases []string `json:"releases,omitempty"`
}

// Condition types.
const (
	// ConditionConfigMapMissing: the ConfigMap was deleted while the
	// operator ran.
	ConditionConfigMapMissing = "ConfigMapMissing"
	// ConditionConfigMapInvalid: the ConfigMap's content was rejected.
	ConditionConfigMapInvalid = "ConfigMapInvalid"
	// ConditionConfigHeld: the last accepted configuration stays in force
	// instead of what its source says (missing, empty without
	// confirmation, invalid); Reason says which.
	ConditionConfigHeld = "ConfigHeld"
	// ConditionForeignReleases: releases in the namespace that the operator
	// did not create and that are named like no module are left in place.
	ConditionForeignReleases = "ForeignReleases"
)
