package moduleobject

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestComputePhasesAndConditions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		state State
		phase string
		// ready, reconciling, stalled
		conds [3]metav1.ConditionStatus
		// what kstatus (Flux, Argo CD, kpt) makes of the object
		kstatus kstatus.Status
	}{
		{"never enabled", State{By: status.SourceDefault}, v1.PhaseDisabled,
			[3]metav1.ConditionStatus{"", "False", "False"}, kstatus.CurrentStatus},
		{"enabled, not run yet", State{Enabled: true, By: status.SourceConfigMap}, v1.PhasePending,
			[3]metav1.ConditionStatus{"False", "True", "False"}, kstatus.InProgressStatus},
		{"waiting", State{Enabled: true, Phase: status.PhaseWaiting}, v1.PhasePending,
			[3]metav1.ConditionStatus{"False", "True", "False"}, kstatus.InProgressStatus},
		{"running", State{Enabled: true, Phase: status.PhaseRunning}, v1.PhaseReconciling,
			[3]metav1.ConditionStatus{"False", "True", "False"}, kstatus.InProgressStatus},
		{"ready", State{Enabled: true, Phase: status.PhaseReady}, v1.PhaseReady,
			[3]metav1.ConditionStatus{"True", "False", "False"}, kstatus.CurrentStatus},
		{"failed", State{Enabled: true, Phase: status.PhaseFailed, LastError: "boom"}, v1.PhaseFailed,
			[3]metav1.ConditionStatus{"False", "False", "True"}, kstatus.FailedStatus},
		{"deleting", State{Phase: status.PhaseDeleting}, v1.PhaseReconciling,
			[3]metav1.ConditionStatus{"False", "True", "False"}, kstatus.InProgressStatus},
		{"disabled after delete", State{Phase: status.PhaseDisabled, By: status.SourceConfigMap}, v1.PhaseDisabled,
			[3]metav1.ConditionStatus{"", "False", "False"}, kstatus.CurrentStatus},
		{"delete failed", State{Phase: status.PhaseFailed, LastError: "uninstall"}, v1.PhaseFailed,
			[3]metav1.ConditionStatus{"False", "False", "True"}, kstatus.FailedStatus},
		{"in maintenance", State{Enabled: true, Phase: status.PhaseReady, Maintenance: true}, v1.PhaseMaintenance,
			[3]metav1.ConditionStatus{"", "False", "False"}, kstatus.CurrentStatus},
		{"in maintenance after a failure", State{Enabled: true, Phase: status.PhaseFailed, Maintenance: true, LastError: "boom"}, v1.PhaseMaintenance,
			[3]metav1.ConditionStatus{"", "False", "False"}, kstatus.CurrentStatus},
		{"waiting for readiness", State{Enabled: true, Phase: status.PhaseRunning, Message: "waiting for Deployment ns/x: Available: 1/3"}, v1.PhaseReconciling,
			[3]metav1.ConditionStatus{"False", "True", "False"}, kstatus.InProgressStatus},
		{"disabled by a requirement", State{By: status.SourceRequirement, Message: "requires crd, which is disabled"}, v1.PhaseDisabled,
			[3]metav1.ConditionStatus{"", "False", "False"}, kstatus.CurrentStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Compute(tt.state, 1, nil, now)
			if st.Phase != tt.phase {
				t.Errorf("phase = %q, want %q", st.Phase, tt.phase)
			}
			got := [3]metav1.ConditionStatus{}
			for i, typ := range []string{v1.ConditionReady, v1.ConditionReconciling, v1.ConditionStalled} {
				for _, c := range st.Conditions {
					if c.Type == typ {
						got[i] = c.Status
						if c.ObservedGeneration != 1 || c.Reason == "" {
							t.Errorf("condition %s = %+v, want observedGeneration 1 and a reason", typ, c)
						}
					}
				}
			}
			if diff := cmp.Diff(tt.conds, got); diff != "" {
				t.Errorf("Ready, Reconciling, Stalled (-want +got):\n%s", diff)
			}
			if ks := computeKstatus(t, st); ks != tt.kstatus {
				t.Errorf("kstatus = %s, want %s", ks, tt.kstatus)
			}
		})
	}
}

func computeKstatus(t *testing.T, st v1.ModuleStatus) kstatus.Status {
	t.Helper()
	m := v1.Module{TypeMeta: metav1.TypeMeta{APIVersion: v1.APIVersion, Kind: v1.KindModule},
		ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1}, Status: st}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

func TestComputeKeepsTransitionTimes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := State{Name: "m", Enabled: true, Phase: status.PhaseReady, HasChart: true, Namespace: "ns", Revision: 2}
	first := Compute(s, 1, nil, t0)
	second := Compute(s, 1, first.Conditions, t0.Add(time.Hour))
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("an unchanged state changed the status (-first +second):\n%s", diff)
	}
	s.Phase, s.LastError = status.PhaseFailed, "boom"
	third := Compute(s, 1, second.Conditions, t0.Add(2*time.Hour))
	for _, c := range third.Conditions {
		if c.Type == v1.ConditionReconciling {
			continue // False before and after
		}
		if !c.LastTransitionTime.Time.Equal(t0.Add(2 * time.Hour)) {
			t.Errorf("condition %s moved at %s, want %s", c.Type, c.LastTransitionTime, t0.Add(2*time.Hour))
		}
	}
	if third.Release == nil || third.Release.Revision != 2 || third.Release.Namespace != "ns" {
		t.Errorf("release = %+v, want m in ns at revision 2", third.Release)
	}
}

func TestComputeNextRunTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := State{Name: "m", Enabled: true, Phase: status.PhaseReady}
	if got := Compute(s, 1, nil, now).NextRunTime; got != nil {
		t.Errorf("nextRunTime without schedules = %s, want absent", got)
	}
	s.NextRun = now.Add(90*time.Second + 300*time.Millisecond)
	got := Compute(s, 1, nil, now).NextRunTime
	if want := now.Add(90 * time.Second); got == nil || !got.Time.Equal(want) {
		t.Errorf("nextRunTime = %v, want %s", got, want)
	}
}
