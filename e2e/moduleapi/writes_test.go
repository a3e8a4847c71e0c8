package moduleapi

import (
	"fmt"
	"maps"
	"testing"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

const metricObjectWrites = "addon_operator_module_object_writes_total"

// TestModuleObjectWritesPerRun counts the Module object writes of a
// converge in which nothing is deployed (the global section changed,
// every module runs, Helm finds every release up to date): each module's
// object is written once, with its new values checksum, and none is
// created again. A converge longer than the 10 s hold adds at most one
// more write a module (Pending while it waits), so the bound is two.
func TestModuleObjectWritesPerRun(t *testing.T) {
	const n = 10
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	config := map[string]string{}
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("mw-m%d", i)
		h.chartModule(fmt.Sprintf("%03d-mw-m%d", 10+i, i), fmt.Sprintf("mwM%d", i))
		config[fmt.Sprintf("mwM%dEnabled", i)] = "true"
	}
	h.SetConfig(config)
	op := h.start()
	op.WaitReady()
	checksums := map[string]string{}
	for _, name := range names {
		m := h.waitModule(name, "Ready", conditionTrue(v1.ConditionReady))
		checksums[name] = m.Status.ValuesChecksum
	}
	creates := op.Metric(metricObjectWrites, map[string]string{"operation": "create"})
	if creates != n {
		t.Errorf("%v objects created, want %d", creates, n)
	}
	before := op.Metric(metricObjectWrites, map[string]string{"operation": "status"})

	noop := maps.Clone(config)
	noop["global"] = "e2eNoop: 1\n"
	h.SetConfig(noop)
	for _, name := range names {
		h.waitModule(name, "Ready with the new values", func(m v1.Module) bool {
			return m.Status.Phase == v1.PhaseReady && m.Status.ValuesChecksum != checksums[name]
		})
	}
	writes := op.Metric(metricObjectWrites, map[string]string{"operation": "status"}) - before
	t.Logf("converge with nothing to deploy, %d modules: %v status writes", n, writes)
	if writes < n || writes > 2*n {
		t.Errorf("%v status writes for %d module runs, want %d to %d", writes, n, n, 2*n)
	}
	if again := op.Metric(metricObjectWrites, map[string]string{"operation": "create"}); again != creates {
		t.Errorf("%v objects created by the converge, want none", again-creates)
	}
}
