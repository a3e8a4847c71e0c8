package kubeclient

import (
	"errors"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHookErrorNamesTheJob(t *testing.T) {
	cause := errors.New("context deadline exceeded")
	he := &HookError{Event: "pre-install", Kind: "Job", Namespace: "ns", Name: "x", After: 2*time.Minute + 300*time.Millisecond,
		Condition: "no condition yet (Pods active 1, succeeded 0, failed 0)", Err: cause}
	want := "pre-install hook Job ns/x not complete after 2m0s: no condition yet (Pods active 1, succeeded 0, failed 0)"
	if he.Error() != want {
		t.Errorf("Error() = %q, want %q", he.Error(), want)
	}
	if !errors.Is(he, cause) {
		t.Error("HookError does not wrap Helm's error")
	}
	he.Failed, he.Condition = true, "Failed=True: BackoffLimitExceeded"
	if want := "pre-install hook Job ns/x failed: Failed=True: BackoffLimitExceeded"; he.Error() != want {
		t.Errorf("Error() = %q, want %q", he.Error(), want)
	}
}

func TestJobState(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	tests := []struct {
		name       string
		status     batchv1.JobStatus
		wantFailed bool
		want       string
	}{
		{name: "no condition", status: batchv1.JobStatus{Active: 1}, want: "no condition yet (Pods active 1, succeeded 0, failed 0)"},
		{
			name: "failed, last condition first",
			status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: at(20)},
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: at(10)},
			}},
			wantFailed: true,
			want:       "Failed=True: BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		{
			name:   "suspended",
			status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", LastTransitionTime: at(5)}}},
			want:   "Suspended=True: JobSuspended",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed, got := jobState(&batchv1.Job{Status: tt.status})
			if failed != tt.wantFailed || got != tt.want {
				t.Errorf("jobState = %t, %q, want %t, %q", failed, got, tt.wantFailed, tt.want)
			}
		})
	}
}

func TestHookEvent(t *testing.T) {
	obj := func(annotation string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAnnotations(map[string]string{"helm.sh/hook": annotation})
		return u
	}
	tests := []struct{ op, annotation, want string }{
		{"install", "pre-install,pre-upgrade", "pre-install"},
		{"upgrade", "pre-install, pre-upgrade", "pre-upgrade"},
		{"upgrade", "post-install", "post-install"},
		{"install", "", ""},
	}
	for _, tt := range tests {
		if got := hookEvent(tt.op, obj(tt.annotation)); got != tt.want {
			t.Errorf("hookEvent(%q, %q) = %q, want %q", tt.op, tt.annotation, got, tt.want)
		}
	}
}
