package executionhook

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

func pod(name string, labels map[string]string, containers ...string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	return p
}

// entries makes status entries from pod, container pairs.
func entries(pairs ...string) []hooksv1.ContainerExecutionHookStatus {
	out := make([]hooksv1.ContainerExecutionHookStatus, 0, len(pairs)/2)
	for pair := range slices.Chunk(pairs, 2) {
		out = append(out, hooksv1.ContainerExecutionHookStatus{PodName: pair[0], ContainerName: pair[len(pair)-1]})
	}
	return out
}

func TestTargets(t *testing.T) {
	db := map[string]string{"app": "db"}
	pods := []corev1.Pod{
		pod("db-b", db, "mysql", "sidecar"),
		pod("db-a", db, "mysql", "sidecar"),
		pod("web", map[string]string{"app": "web"}, "nginx"),
	}
	sel := &metav1.LabelSelector{MatchLabels: db}
	for _, tc := range []struct {
		name    string
		spec    hooksv1.ExecutionHookSpec
		want    []hooksv1.ContainerExecutionHookStatus
		wantErr string
	}{
		{name: "selector, all containers, sorted by pod", spec: hooksv1.ExecutionHookSpec{PodSelector: sel},
			want: entries("db-a", "mysql", "db-a", "sidecar", "db-b", "mysql", "db-b", "sidecar")},
		{name: "container selector", spec: hooksv1.ExecutionHookSpec{PodSelector: sel, ContainerSelector: map[string]string{"containerName": "mysql"}},
			want: entries("db-a", "mysql", "db-b", "mysql")},
		{name: "execute once takes the first pod by name", spec: hooksv1.ExecutionHookSpec{PodSelector: sel,
			ExecutionHookTemplateSpec: hooksv1.ExecutionHookTemplateSpec{Policy: hooksv1.ExecuteOnce}},
			want: entries("db-a", "mysql", "db-a", "sidecar")},
		{name: "names win over selectors", spec: hooksv1.ExecutionHookSpec{PodSelector: sel, PodContainerNamesList: []hooksv1.PodContainerNames{
			{PodName: "web"}, {PodName: "db-b", ContainerNames: []string{"sidecar"}}}},
			want: entries("web", "nginx", "db-b", "sidecar")},
		{name: "names with execute once", spec: hooksv1.ExecutionHookSpec{
			ExecutionHookTemplateSpec: hooksv1.ExecutionHookTemplateSpec{Policy: hooksv1.ExecuteOnce},
			PodContainerNamesList:     []hooksv1.PodContainerNames{{PodName: "db-b"}, {PodName: "web"}}},
			want: entries("db-b", "mysql", "db-b", "sidecar")},
		{name: "missing pod", spec: hooksv1.ExecutionHookSpec{PodContainerNamesList: []hooksv1.PodContainerNames{{PodName: "gone"}}},
			wantErr: `pod "gone" of podContainerNamesList: not found`},
		{name: "missing container", spec: hooksv1.ExecutionHookSpec{PodContainerNamesList: []hooksv1.PodContainerNames{{PodName: "web", ContainerNames: []string{"php"}}}},
			wantErr: `container "php" of pod "web" in podContainerNamesList: not found`},
		{name: "selector matches nothing", spec: hooksv1.ExecutionHookSpec{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}},
			wantErr: "no container selected: no pod matches podSelector and containerSelector"},
		{name: "nothing given", spec: hooksv1.ExecutionHookSpec{},
			wantErr: "no container selected: neither podContainerNamesList nor podSelector is set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := targets(&tc.spec, pods)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := targets(&hooksv1.ExecutionHookSpec{}, pods); !errors.Is(err, ErrNothingSelected) {
		t.Errorf("err = %v, want ErrNothingSelected", err)
	}
}

func TestSummary(t *testing.T) {
	done := func(ok bool) *hooksv1.ExecutionHookActionStatus {
		return &hooksv1.ExecutionHookActionStatus{ActionTimestamp: &metav1.Time{}, ActionSucceed: ptr.To(ok)}
	}
	started := &hooksv1.ExecutionHookActionStatus{ActionTimestamp: &metav1.Time{}}
	for _, tc := range []struct {
		name string
		pre  []*hooksv1.ExecutionHookActionStatus
		want *bool
	}{
		{name: "all succeeded", pre: []*hooksv1.ExecutionHookActionStatus{done(true), done(true)}, want: ptr.To(true)},
		{name: "one failed", pre: []*hooksv1.ExecutionHookActionStatus{done(true), done(false)}, want: ptr.To(false)},
		{name: "one still running", pre: []*hooksv1.ExecutionHookActionStatus{done(false), started}, want: nil},
		{name: "not started ones do not count", pre: []*hooksv1.ExecutionHookActionStatus{done(true), nil}, want: ptr.To(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := make([]hooksv1.ContainerExecutionHookStatus, 0, len(tc.pre))
			for _, p := range tc.pre {
				es = append(es, hooksv1.ContainerExecutionHookStatus{PreActionStatus: p})
			}
			if diff := cmp.Diff(tc.want, summary(es, preOf)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	started := func(ts ...time.Time) []hooksv1.ContainerExecutionHookStatus {
		var out []hooksv1.ContainerExecutionHookStatus
		for _, x := range ts {
			out = append(out, hooksv1.ContainerExecutionHookStatus{PreActionStatus: &hooksv1.ExecutionHookActionStatus{ActionTimestamp: ptr.To(metav1.NewTime(x))}})
		}
		return append(out, hooksv1.ContainerExecutionHookStatus{}) // not started
	}
	hook := func(exp *int64, deleted bool, st []hooksv1.ContainerExecutionHookStatus) *hooksv1.ExecutionHook {
		h := &hooksv1.ExecutionHook{}
		h.Spec.ExpirationSeconds = exp
		h.Status.ContainerExecutionHookStatuses = st
		if deleted {
			h.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
		}
		return h
	}
	for _, tc := range []struct {
		name string
		hook *hooksv1.ExecutionHook
		now  time.Time
		want bool
	}{
		{name: "deleted", hook: hook(nil, true, nil), now: t0, want: true},
		{name: "no expiration", hook: hook(nil, false, started(t0)), now: t0.Add(time.Hour), want: false},
		{name: "before expiry", hook: hook(ptr.To[int64](30), false, started(t0.Add(5*time.Second), t0)), now: t0.Add(29 * time.Second), want: false},
		{name: "expired from the first start", hook: hook(ptr.To[int64](30), false, started(t0.Add(5*time.Second), t0)), now: t0.Add(30 * time.Second), want: true},
		{name: "nothing started yet", hook: hook(ptr.To[int64](30), false, nil), now: t0.Add(time.Hour), want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := postDue(tc.hook, tc.now); got != tc.want {
				t.Errorf("postDue = %v, want %v", got, tc.want)
			}
		})
	}
}
