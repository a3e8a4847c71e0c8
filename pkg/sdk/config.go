package sdk

import (
	"context"
	"encoding/json"
)

// Hook is one hook of a binary: its configuration and the function that
// runs it.
type Hook struct {
	// Name identifies the hook in "hook list" and in the operator's hook
	// names (<binary>:<Name>:<id>); keep it unique within the binary.
	Name   string
	Config Config
	// Run is called with the run's inputs; the outputs it records on the
	// Input are written only when it returns nil. A non-nil error fails
	// the run (the operator retries it, or logs it with allowFailure).
	Run func(ctx context.Context, in *Input) error
	// Readiness marks the binary's readiness hook, run with "hook ready";
	// a binary has at most one.
	Readiness bool
}

// Config is a hook's configuration, in the shape of the hook protocol's
// configVersion v1 (see docs/hook-protocol.md). Nil orders mean the hook
// does not declare that lifecycle binding.
type Config struct {
	OnStartup        *float64 `json:"onStartup,omitempty"`
	BeforeAll        *float64 `json:"beforeAll,omitempty"`
	AfterAll         *float64 `json:"afterAll,omitempty"`
	BeforeHelm       *float64 `json:"beforeHelm,omitempty"`
	AfterHelm        *float64 `json:"afterHelm,omitempty"`
	BeforeDeleteHelm *float64 `json:"beforeDeleteHelm,omitempty"`
	AfterDeleteHelm  *float64 `json:"afterDeleteHelm,omitempty"`

	Kubernetes []KubernetesBinding `json:"kubernetes,omitempty"`
	Schedule   []ScheduleBinding   `json:"schedule,omitempty"`
	Settings   *Settings           `json:"settings,omitempty"`
}

// Order returns a pointer to o, for Config's lifecycle bindings.
func Order(o float64) *float64 { return &o }

// Bool returns a pointer to b, for the optional switches of bindings.
func Bool(b bool) *bool { return &b }

// KubernetesBinding watches objects; see docs/hook-protocol.md for each
// field. Nil switches take the protocol's defaults.
type KubernetesBinding struct {
	Name          string         `json:"name"`
	APIVersion    string         `json:"apiVersion"`
	Kind          string         `json:"kind"`
	Namespace     *Namespace     `json:"namespace,omitempty"`
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`
	NameSelector  *NameSelector  `json:"nameSelector,omitempty"`
	JqFilter      string         `json:"jqFilter,omitempty"`
	// ExecuteHookOnEvent lists Added, Modified, Deleted; nil means all,
	// an empty non-nil list none (snapshot only).
	ExecuteHookOnEvent           []string `json:"executeHookOnEvent"`
	ExecuteHookOnSynchronization *bool    `json:"executeHookOnSynchronization,omitempty"`
	WaitForSynchronization       *bool    `json:"waitForSynchronization,omitempty"`
	KeepFullObjectsInMemory      *bool    `json:"keepFullObjectsInMemory,omitempty"`
	IncludeSnapshotsFrom         []string `json:"includeSnapshotsFrom,omitempty"`
	Group                        string   `json:"group,omitempty"`
	Queue                        string   `json:"queue,omitempty"`
	AllowFailure                 bool     `json:"allowFailure,omitempty"`
}

// MarshalJSON leaves executeHookOnEvent out when it is nil (every event).
func (b KubernetesBinding) MarshalJSON() ([]byte, error) {
	type plain KubernetesBinding
	if b.ExecuteHookOnEvent != nil {
		return json.Marshal(plain(b))
	}
	return json.Marshal(struct {
		plain
		ExecuteHookOnEvent []string `json:"executeHookOnEvent,omitempty"`
	}{plain: plain(b)})
}

// Namespace selects the namespaces a binding watches.
type Namespace struct {
	NameSelector  *NameSelector  `json:"nameSelector,omitempty"`
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
}

// NameSelector selects objects by name.
type NameSelector struct {
	MatchNames []string `json:"matchNames"`
}

// LabelSelector is a Kubernetes label selector.
type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []LabelExpression `json:"matchExpressions,omitempty"`
}

// LabelExpression is one requirement of a LabelSelector.
type LabelExpression struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// FieldSelector selects objects by fields.
type FieldSelector struct {
	MatchExpressions []FieldExpression `json:"matchExpressions"`
}

// FieldExpression is one requirement of a FieldSelector: Operator is
// Equals or NotEquals.
type FieldExpression struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
}

// ScheduleBinding runs the hook on a crontab (5 fields, or 6 with seconds
// first).
type ScheduleBinding struct {
	Name                 string   `json:"name"`
	Crontab              string   `json:"crontab"`
	IncludeSnapshotsFrom []string `json:"includeSnapshotsFrom,omitempty"`
	Group                string   `json:"group,omitempty"`
	Queue                string   `json:"queue,omitempty"`
	AllowFailure         bool     `json:"allowFailure,omitempty"`
}

// Settings throttles the hook's runs: ExecutionMinInterval is a duration
// such as "5s".
type Settings struct {
	ExecutionMinInterval string `json:"executionMinInterval,omitempty"`
	ExecutionBurst       int    `json:"executionBurst,omitempty"`
}

// versioned is a Config as printed for --config and in "hook config".
type versioned struct {
	ConfigVersion string `json:"configVersion"`
	Metadata      struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Config
}

func (h *Hook) versioned() versioned {
	v := versioned{ConfigVersion: "v1", Config: h.Config}
	v.Metadata.Name = h.Name
	return v
}
