package executionhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
)

// ErrNothingSelected is returned by targets when the spec selects no
// container: the hook cannot run.
var ErrNothingSelected = errors.New("no container selected")

// targets returns one status entry per container the hook runs in, in a
// stable order (pod name, then the container's order in the pod), from the
// pods of the hook's namespace. podContainerNamesList wins over the
// selectors; ExecuteOnce keeps the first selected pod only. A named pod or
// container that does not exist is an error naming it.
func targets(spec *hooksv1.ExecutionHookSpec, pods []corev1.Pod) ([]hooksv1.ContainerExecutionHookStatus, error) {
	byName := make(map[string]*corev1.Pod, len(pods))
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	var out []hooksv1.ContainerExecutionHookStatus
	switch {
	case len(spec.PodContainerNamesList) > 0:
		for _, pc := range spec.PodContainerNamesList {
			pod, ok := byName[pc.PodName]
			if !ok {
				return nil, fmt.Errorf("pod %q of podContainerNamesList: not found", pc.PodName)
			}
			names, err := namedContainers(pod, pc.ContainerNames)
			if err != nil {
				return nil, err
			}
			out = appendEntries(out, pod.Name, names)
			if spec.Policy == hooksv1.ExecuteOnce {
				break
			}
		}
	case spec.PodSelector != nil:
		sel, err := metav1.LabelSelectorAsSelector(spec.PodSelector)
		if err != nil {
			return nil, fmt.Errorf("podSelector: %w", err)
		}
		sorted := slices.Clone(pods)
		slices.SortFunc(sorted, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		for i := range sorted {
			pod := &sorted[i]
			if !sel.Matches(labels.Set(pod.Labels)) || pod.DeletionTimestamp != nil {
				continue
			}
			names := selectedContainers(pod, spec.ContainerSelector)
			if len(names) == 0 {
				continue
			}
			out = appendEntries(out, pod.Name, names)
			if spec.Policy == hooksv1.ExecuteOnce {
				break
			}
		}
	default:
		return nil, fmt.Errorf("%w: neither podContainerNamesList nor podSelector is set", ErrNothingSelected)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no pod matches podSelector and containerSelector", ErrNothingSelected)
	}
	return out, nil
}

func appendEntries(out []hooksv1.ContainerExecutionHookStatus, pod string, containers []string) []hooksv1.ContainerExecutionHookStatus {
	for _, c := range containers {
		out = append(out, hooksv1.ContainerExecutionHookStatus{PodName: pod, ContainerName: c})
	}
	return out
}

// namedContainers returns the named containers of pod (all when none are
// named), failing on a name the pod does not have.
func namedContainers(pod *corev1.Pod, names []string) ([]string, error) {
	if len(names) == 0 {
		return selectedContainers(pod, nil), nil
	}
	for _, n := range names {
		if !slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == n }) {
			return nil, fmt.Errorf("container %q of pod %q in podContainerNamesList: not found", n, pod.Name)
		}
	}
	return names, nil
}

// selectedContainers returns the containers of pod whose name is one of
// the selector's values; all of them when the selector is empty.
func selectedContainers(pod *corev1.Pod, selector map[string]string) []string {
	var out []string
	for i := range pod.Spec.Containers {
		if name := pod.Spec.Containers[i].Name; len(selector) == 0 || slices.Contains(mapValues(selector), name) {
			out = append(out, name)
		}
	}
	return out
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// summary returns the summary of an action over the entries: nil while
// some entry has no final result, else whether all succeeded. action
// picks the pre or post status of an entry; entries it returns nil for do
// not count.
func summary(entries []hooksv1.ContainerExecutionHookStatus, action func(*hooksv1.ContainerExecutionHookStatus) *hooksv1.ExecutionHookActionStatus) *bool {
	ok := true
	for i := range entries {
		st := action(&entries[i])
		if st == nil {
			continue
		}
		if st.ActionSucceed == nil {
			return nil
		}
		ok = ok && *st.ActionSucceed
	}
	return &ok
}

func preOf(e *hooksv1.ContainerExecutionHookStatus) *hooksv1.ExecutionHookActionStatus {
	return e.PreActionStatus
}

func postOf(e *hooksv1.ContainerExecutionHookStatus) *hooksv1.ExecutionHookActionStatus {
	return e.PostActionStatus
}

// expiry returns when the hook's PostAction is due without a deletion: the
// first PreAction start plus expirationSeconds; zero when it never is.
func expiry(hook *hooksv1.ExecutionHook) time.Time {
	seconds := effectiveSpec(hook).ExpirationSeconds
	if seconds == nil {
		return time.Time{}
	}
	var first time.Time
	for _, e := range hook.Status.ContainerExecutionHookStatuses {
		if e.PreActionStatus == nil || e.PreActionStatus.ActionTimestamp == nil {
			continue
		}
		if t := e.PreActionStatus.ActionTimestamp.Time; first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if first.IsZero() {
		return time.Time{}
	}
	return first.Add(time.Duration(*seconds) * time.Second)
}

// postDue reports whether the PostAction phase has begun: the hook is being
// deleted or has expired.
func postDue(hook *hooksv1.ExecutionHook, now time.Time) bool {
	if hook.DeletionTimestamp != nil {
		return true
	}
	exp := expiry(hook)
	return !exp.IsZero() && !now.Before(exp)
}

// effectiveSpec returns the spec the hook runs: its own, with the policy,
// actions and expiration copied from its template (status.template) when
// the spec has no preAction. The hook is not changed.
func effectiveSpec(hook *hooksv1.ExecutionHook) *hooksv1.ExecutionHookSpec {
	spec := hook.Spec
	if spec.PreAction == nil && hook.Status.Template != nil {
		spec.ExecutionHookTemplateSpec = *hook.Status.Template
	}
	return &spec
}

// prePending reports whether the entry's PreAction has not started.
func prePending(e *hooksv1.ContainerExecutionHookStatus) bool {
	return e.PreActionStatus == nil || e.PreActionStatus.ActionTimestamp == nil
}

// postPending reports whether the entry's PostAction is due and has no
// result: its PreAction started.
func postPending(e *hooksv1.ContainerExecutionHookStatus) bool {
	return !prePending(e) && (e.PostActionStatus == nil || e.PostActionStatus.ActionSucceed == nil)
}

// pendingPods returns, once each and in order, the pods of the entries
// for which pending holds.
func pendingPods(entries []hooksv1.ContainerExecutionHookStatus, pending func(*hooksv1.ContainerExecutionHookStatus) bool) []string {
	var out []string
	for i := range entries {
		if pending(&entries[i]) && !slices.Contains(out, entries[i].PodName) {
			out = append(out, entries[i].PodName)
		}
	}
	return out
}
