// Package moduleobject keeps one cluster-scoped Module object
// (addon-operator.io/v1alpha1) per discovered module, with a status that
// follows the operator's module state: it maps that state to a phase and
// kstatus conditions, writes only what changed with server-side apply,
// coalesces bursts, and removes the objects of modules that are gone.
package moduleobject

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// State is the operator's state of one module, as the Module object shows
// it. The operator hands a new State to Writer.Update whenever the module's
// state changes.
type State struct {
	Name    string
	Enabled bool
	By      status.Source
	Phase   status.Phase
	// HasChart is true for a module with a Helm chart; its release is named
	// after the module and lives in Namespace.
	HasChart  bool
	Namespace string
	Revision  int
	// ChartVersion is the version of the module's Chart.yaml, if any.
	ChartVersion   string
	ValuesChecksum string
	// LastRun is when the last run ended, zero before the first;
	// LastRunDuration how long it took.
	LastRun         time.Time
	LastRunDuration time.Duration
	LastError       string
	// Attempts counts failed runs in a row; NextRetry is when the module
	// runs again while it backs off, zero otherwise.
	Attempts  int
	NextRetry time.Time
	// NextRun is when a schedule binding of the module's hooks fires
	// next, zero for a module without one.
	NextRun time.Time
	// LastHandledReconcileAt is the last reconcile request handled (the
	// value of v1.ReconcileRequestAnnotation).
	LastHandledReconcileAt string
	// Maintenance is set while the module is in maintenance; Message says
	// what a run waits for, or why a module its sources enable is not.
	Maintenance bool
	Message     string
	// Labels are the module's definition labels (DefinitionLabels), set
	// on the object besides the writer's own.
	Labels map[string]string
	// Warnings list what the operator ignored in the module's module.yaml.
	Warnings []string
}

// Reasons of the Module conditions.
const (
	ReasonDisabled    = "Disabled"
	ReasonPending     = "Pending"
	ReasonRunning     = "Running"
	ReasonDeleting    = "Deleting"
	ReasonSucceeded   = "RunSucceeded"
	ReasonFailed      = "RunFailed"
	ReasonMaintenance = "Maintenance"
)

// phaseOf is the object's phase and the reason of its conditions for a
// module state: a run waiting for its requirements or for its objects to
// be ready is Pending or Reconciling with the wait in the message, a module
// a disabled requirement turns off is Disabled, and one in maintenance is
// Maintenance whatever its last run did.
func phaseOf(s State) (phase, reason string) {
	switch {
	case s.Phase == status.PhaseRunning:
		return v1.PhaseReconciling, ReasonRunning
	case s.Phase == status.PhaseDeleting:
		return v1.PhaseReconciling, ReasonDeleting
	case s.Enabled && s.Maintenance:
		return v1.PhaseMaintenance, ReasonMaintenance
	case s.Phase == status.PhaseFailed:
		return v1.PhaseFailed, ReasonFailed
	case !s.Enabled:
		return v1.PhaseDisabled, ReasonDisabled
	case s.Phase == status.PhaseReady:
		return v1.PhaseReady, ReasonSucceeded
	default: // enabled, waiting for its first run or the converge to reach it
		return v1.PhasePending, ReasonPending
	}
}

// conditionsOf returns the Ready, Reconciling and Stalled conditions of a
// phase, after the kstatus conventions: Reconciling is True while work is
// under way, Stalled while the last run failed, Ready only when the module
// runs as wanted. A disabled module has no Ready condition (Compute removes
// it) and is neither reconciling nor stalled: kstatus counts it as Current,
// as a GitOps tool should a module switched off on purpose, while
// kubectl wait --for=condition=Ready keeps waiting for it.
func conditionsOf(phase, reason string, s State) (ready, reconciling, stalled metav1.Condition) {
	cond := func(typ string, ok bool, msg string) metav1.Condition {
		st := metav1.ConditionFalse
		if ok {
			st = metav1.ConditionTrue
		}
		return metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg}
	}
	msg := message(phase, reason, s)
	if len(s.Warnings) > 0 && phase != v1.PhaseFailed {
		msg = truncate(msg+" (warnings: "+strings.Join(s.Warnings, "; ")+")", 1000)
	}
	return cond(v1.ConditionReady, phase == v1.PhaseReady, msg),
		cond(v1.ConditionReconciling, phase == v1.PhasePending || phase == v1.PhaseReconciling, msg),
		cond(v1.ConditionStalled, phase == v1.PhaseFailed, msg)
}

func message(phase, reason string, s State) string {
	switch phase {
	case v1.PhaseFailed:
		return truncate(s.LastError, 1000)
	case v1.PhaseDisabled:
		return withMessage("disabled by "+string(s.By), s.Message)
	case v1.PhaseReady:
		return "enabled by " + string(s.By) + "; last run succeeded"
	case v1.PhasePending:
		return withMessage("enabled by "+string(s.By)+"; waiting to run", s.Message)
	case v1.PhaseMaintenance:
		return "in maintenance: the release is neither upgraded, nor healed, nor reverted"
	}
	if reason == ReasonDeleting {
		return "uninstalling"
	}
	return withMessage("running", s.Message)
}

// withMessage appends what the operator says about the module, if anything.
func withMessage(base, msg string) string {
	if msg == "" {
		return base
	}
	return base + ": " + truncate(msg, 1000)
}

// Compute returns the status of a module's object for state s, keeping the
// transition times of prev's conditions whose status did not change. gen is
// the object's generation.
func Compute(s State, gen int64, prev []metav1.Condition, now time.Time) v1.ModuleStatus {
	phase, reason := phaseOf(s)
	out := v1.ModuleStatus{
		Phase: phase, Enabled: s.Enabled, EnabledBy: string(s.By),
		ChartVersion: s.ChartVersion, ValuesChecksum: s.ValuesChecksum, LastError: truncate(s.LastError, 4000),
		ObservedGeneration: gen,
	}
	if s.HasChart {
		out.Release = &v1.ReleaseStatus{Name: s.Name, Namespace: s.Namespace, Revision: s.Revision}
	}
	if !s.LastRun.IsZero() {
		t := metav1.NewTime(s.LastRun.UTC().Truncate(time.Second))
		out.LastRunTime = &t
		out.LastRunDuration = &metav1.Duration{Duration: s.LastRunDuration.Round(time.Millisecond)}
	}
	out.Attempts, out.LastHandledReconcileAt = s.Attempts, s.LastHandledReconcileAt
	if !s.NextRetry.IsZero() {
		t := metav1.NewTime(s.NextRetry.UTC().Truncate(time.Second))
		out.NextRetryTime = &t
	}
	if !s.NextRun.IsZero() {
		t := metav1.NewTime(s.NextRun.UTC().Truncate(time.Second))
		out.NextRunTime = &t
	}
	conds := make([]metav1.Condition, len(prev))
	for i := range prev {
		conds[i] = *prev[i].DeepCopy()
	}
	ready, reconciling, stalled := conditionsOf(phase, reason, s)
	for _, c := range []metav1.Condition{ready, reconciling, stalled} {
		c.ObservedGeneration = gen
		c.LastTransitionTime = metav1.NewTime(now.UTC().Truncate(time.Second))
		meta.SetStatusCondition(&conds, c)
	}
	if phase == v1.PhaseDisabled || phase == v1.PhaseMaintenance {
		// Held on purpose: current for GitOps health checks, not Ready.
		meta.RemoveStatusCondition(&conds, v1.ConditionReady)
	}
	out.Conditions = conds
	return out
}

// truncate keeps a message within n bytes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
