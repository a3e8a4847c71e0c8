package status

import "time"

// Steps of a module run, as the timeline draws them.
const (
	// StepRequirements: held until the modules it requires are ready.
	StepRequirements = "requirements"
	// StepBackoff: waiting for the retry after a failed run.
	StepBackoff = "backoff"
	// StepHooks: running its hooks (onStartup, Synchronization,
	// beforeHelm; afterHelm after the release).
	StepHooks = "hooks"
	// StepHelm: CRDs, webhooks and the Helm install or upgrade.
	StepHelm = "helm"
	// StepReadiness: parked until the release's objects are ready.
	StepReadiness = "readiness"
)

// Outcomes of a run.
const (
	OutcomeRunning   = "Running"
	OutcomeSucceeded = "Succeeded"
	OutcomeFailed    = "Failed"
)

// Span is one step of a run; End is zero while it lasts.
type Span struct {
	Step  string    `json:"step"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end,omitzero"`
}

// Run is one attempt of a module, with the waits before it (requirements,
// backoff) as its first spans. Start is when its first span began; End is
// zero while it lasts.
type Run struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end,omitzero"`
	Outcome string    `json:"outcome"`
	Error   string    `json:"error,omitempty"`
	Spans   []Span    `json:"spans"`
}

// ModuleRuns is a module's recent runs, oldest first.
type ModuleRuns struct {
	Module string `json:"module"`
	Runs   []Run  `json:"runs"`
}

// HookInfo is one of a module's hooks with its bindings.
type HookInfo struct {
	Name     string        `json:"name"`
	Bindings []BindingInfo `json:"bindings"`
}

// BindingInfo is one binding of a hook: its type (onStartup, beforeHelm,
// kubernetes, schedule, ...), its name, and in words what it binds to
// (the order, the watched kind, the crontab).
type BindingInfo struct {
	Type   string `json:"type"`
	Name   string `json:"name,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Revision is one revision of a module's Helm release.
type Revision struct {
	Revision    int       `json:"revision"`
	Updated     time.Time `json:"updated"`
	Status      string    `json:"status"`
	Chart       string    `json:"chart,omitempty"`
	Description string    `json:"description,omitempty"`
}

// DriftCheck is the last drift check of a module's release: when it ran,
// the objects that differed from the release (with their fields), and
// the error that stopped it.
type DriftCheck struct {
	Checked time.Time     `json:"checked"`
	Objects []DriftObject `json:"objects,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// DriftObject is an object whose live state differed from its release.
type DriftObject struct {
	Object   string   `json:"object"`
	Fields   []string `json:"fields,omitempty"`
	Reverted bool     `json:"reverted,omitempty"`
}

// Event is a Kubernetes Event about a module.
type Event struct {
	Last    time.Time `json:"last"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int       `json:"count,omitempty"`
}

// ObjectStatus is one object of a module's release with its kstatus
// status (Current, InProgress, Failed, NotFound, ...) and message.
type ObjectStatus struct {
	Object  string `json:"object"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// ModuleDetail is what a module's page shows beyond its ModuleStatus.
// A section that could not be read is named in Errors with why.
type ModuleDetail struct {
	Times     RunTimes       `json:"times"`
	Hooks     []HookInfo     `json:"hooks,omitempty"`
	Runs      []Run          `json:"runs,omitempty"`
	Revisions []Revision     `json:"revisions,omitempty"`
	Drift     *DriftCheck    `json:"drift,omitempty"`
	Events    []Event        `json:"events,omitempty"`
	Objects   []ObjectStatus `json:"objects,omitempty"`
	Errors    []string       `json:"errors,omitempty"`
}
