package operatortest

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/e2e/cluster"
)

// configMapName is the operator's ConfigMap, the default of --config-map.
const configMapName = "addon-operator"

// Harness runs the operator for one test in a namespace of its own, as
// many times as the test starts it, one run after another or side by side.
// If the test fails, every run's output is shown at cleanup.
type Harness struct {
	T         *testing.T
	Client    kubernetes.Interface
	Namespace string

	bin, kubeconfig string
	runs            []*Operator
}

// New makes a namespace for t on the control plane; bin is the binary
// TestMain built.
func New(t *testing.T, cp *cluster.ControlPlane, bin string) *Harness {
	t.Helper()
	h := &Harness{T: t, Client: cp.Clientset(t), Namespace: cp.Namespace(t), bin: bin, kubeconfig: cp.Kubeconfig}
	// Registered before any run's cleanup, so it runs after all of them,
	// when the output is complete.
	t.Cleanup(h.showOutput)
	return h
}

// Stop stops every run still going (Operator.Stop).
func (h *Harness) Stop() {
	h.T.Helper()
	for _, op := range h.runs {
		op.Stop()
	}
}

func (h *Harness) showOutput() {
	if !h.T.Failed() {
		return
	}
	for i, op := range h.runs {
		if op.shown {
			h.T.Logf("%s log (run %d of %d):\n%s", op.name, i+1, len(h.runs), op.log.String())
		}
	}
}

// Lines returns the JSON log lines of every run so far, run after run.
func (h *Harness) Lines() []Line {
	var lines []Line
	for _, op := range h.runs {
		lines = append(lines, op.log.Lines()...)
	}
	return lines
}

// CountLog counts the log lines of every run with message msg whose
// fields contain the strings in attrs.
func (h *Harness) CountLog(msg string, attrs map[string]string) int {
	n := 0
	for _, l := range h.Lines() {
		if l.matches(msg, attrs) {
			n++
		}
	}
	return n
}

// WaitLog waits until CountLog(msg, attrs) is at least n.
func (h *Harness) WaitLog(n int, msg string, attrs map[string]string) {
	h.T.Helper()
	h.Poll(fmt.Sprintf("%d log lines %q with %v", n, msg, attrs), func() bool { return h.CountLog(msg, attrs) >= n })
}

// Poll calls cond until it holds, failing the test after Timeout.
func (h *Harness) Poll(what string, cond func() bool) {
	h.T.Helper()
	Poll(h.T, what, cond)
}

// SetConfig creates the operator's ConfigMap with data or replaces its
// data.
func (h *Harness) SetConfig(data map[string]string) {
	h.T.Helper()
	ctx := h.T.Context()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(ctx, configMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName}, Data: data}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			h.T.Fatalf("create ConfigMap: %v", err)
		}
		return
	}
	if err != nil {
		h.T.Fatalf("get ConfigMap: %v", err)
	}
	cm.Data = data
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		h.T.Fatalf("update ConfigMap: %v", err)
	}
}

// ConfigMapData returns the data of a ConfigMap in the namespace, nil when
// it does not exist.
func (h *Harness) ConfigMapData(name string) map[string]string {
	h.T.Helper()
	cm, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Get(h.T.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.T.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm.Data
}

// ReleaseRevision returns the latest revision of a Helm release in the
// namespace, 0 if there is none, from Helm's storage Secrets.
func (h *Harness) ReleaseRevision(name string) int {
	h.T.Helper()
	list, err := h.Client.CoreV1().Secrets(h.Namespace).List(h.T.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		h.T.Fatalf("list release secrets: %v", err)
	}
	rev := 0
	for i := range list.Items {
		if v, err := strconv.Atoi(list.Items[i].Labels["version"]); err == nil && v > rev {
			rev = v
		}
	}
	return rev
}
