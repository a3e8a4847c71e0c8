package catalogue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/pkg/status"
)

const defaultsLabel = "addon-operator.io/defaults"

// labelNamespace sets or (value "") removes the opt-in label of ns.
func (h *harness) labelNamespace(ns, value string) {
	h.T.Helper()
	nss := h.Client.CoreV1().Namespaces()
	obj, err := nss.Get(h.T.Context(), ns, metav1.GetOptions{})
	if err != nil {
		h.T.Fatal(err)
	}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	if value == "" {
		delete(obj.Labels, defaultsLabel)
	} else {
		obj.Labels[defaultsLabel] = value
	}
	if _, err := nss.Update(h.T.Context(), obj, metav1.UpdateOptions{}); err != nil {
		h.T.Fatal(err)
	}
}

// quotaHard returns the hard limits of ns's namespace-defaults quota as
// strings, nil when it does not exist.
func (h *harness) quotaHard(ns string) map[string]string {
	h.T.Helper()
	q, err := h.Client.CoreV1().ResourceQuotas(ns).Get(h.T.Context(), "namespace-defaults", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	out := map[string]string{}
	for name, qty := range q.Spec.Hard {
		out[string(name)] = qty.String()
	}
	return out
}

// limitRange returns ns's namespace-defaults LimitRange, nil when it does
// not exist.
func (h *harness) limitRange(ns string) *corev1.LimitRange {
	h.T.Helper()
	lr, err := h.Client.CoreV1().LimitRanges(ns).Get(h.T.Context(), "namespace-defaults", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	return lr
}

// waitQuota waits until ns's quota has the hard limits want (nil: none).
func (h *harness) waitQuota(ns string, want map[string]string) {
	h.T.Helper()
	var got map[string]string
	h.Poll("quota in "+ns+" to be "+mustJSON(want), func() bool {
		got = h.quotaHard(ns)
		return cmp.Equal(want, got)
	})
}

// TestNamespaceDefaults is the only test that enables namespace-defaults:
// it acts on namespaces cluster-wide.
func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	early, late, gone := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	h.labelNamespace(early, "enabled")
	h.labelNamespace(gone, "enabled")
	h.labelNamespace(late, "disabled") // another value does not opt in
	// Only pods is set: the other sizes are the schema's defaults.
	h.SetConfig(map[string]string{"namespaceDefaults": "quota:\n  pods: 7\n"})
	h.start()
	h.WaitReady()

	want := map[string]string{"requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8", "limits.memory": "16Gi", "pods": "7"}
	h.waitQuota(early, want)
	h.waitQuota(gone, want)
	lr := h.limitRange(early)
	if lr == nil || len(lr.Spec.Limits) != 1 {
		t.Fatalf("LimitRange in %s: %+v", early, lr)
	}
	item := lr.Spec.Limits[0]
	gotLimits := map[string]string{
		"type": string(item.Type), "defaultRequest.cpu": item.DefaultRequest.Cpu().String(), "defaultRequest.memory": item.DefaultRequest.Memory().String(),
		"default.cpu": item.Default.Cpu().String(), "default.memory": item.Default.Memory().String(),
	}
	wantLimits := map[string]string{"type": "Container", "defaultRequest.cpu": "100m", "defaultRequest.memory": "128Mi", "default.cpu": "500m", "default.memory": "512Mi"}
	if diff := cmp.Diff(wantLimits, gotLimits); diff != "" {
		t.Errorf("LimitRange (-want +got):\n%s", diff)
	}
	if h.quotaHard(late) != nil {
		t.Errorf("namespace %s labelled %s=disabled got a quota", late, defaultsLabel)
	}

	// Labelled after start: picked up.
	h.labelNamespace(late, "enabled")
	h.waitQuota(late, want)
	h.Poll("LimitRange in "+late, func() bool { return h.limitRange(late) != nil })

	// The label removed: both objects go.
	h.labelNamespace(early, "")
	h.waitQuota(early, nil)
	h.Poll("LimitRange in "+early+" to be gone", func() bool { return h.limitRange(early) == nil })

	// A namespace being deleted leaves the selector: its objects are
	// deleted (without a controller manager the namespace stays
	// Terminating, so nothing else would remove them).
	if err := h.Client.CoreV1().Namespaces().Delete(t.Context(), gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitQuota(gone, nil)

	// A quota deleted by hand is recreated.
	if err := h.Client.CoreV1().ResourceQuotas(late).Delete(t.Context(), "namespace-defaults", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitQuota(late, want)

	// New sizes in the ConfigMap reach the labelled namespaces.
	h.SetConfig(map[string]string{"namespaceDefaults": "quota:\n  pods: 9\n  requestsCPU: 500m\n"})
	want["pods"], want["requests.cpu"] = "9", "500m"
	h.waitQuota(late, want)
	if h.quotaHard(early) != nil {
		t.Errorf("unlabelled namespace %s got a quota again", early)
	}

	// An invalid size is rejected: the last valid ConfigMap stays.
	h.SetConfig(map[string]string{"namespaceDefaults": "quota:\n  pods: 9\n  requestsCPU: lots\n"})
	h.WaitCondition(status.ConditionConfigMapInvalid, "namespaceDefaults.quota.requestsCPU")
	if got := h.quotaHard(late); !cmp.Equal(want, got) {
		t.Errorf("quota after an invalid ConfigMap = %v, want %v", got, want)
	}
	// A run that read the snapshot just before the namespace started
	// terminating may fail to write into it; its retry reads the new one.
	if f := h.failures("because it is being terminated"); len(f) != 0 {
		t.Errorf("failed tasks or module runs: %q, want none", f)
	}
}
