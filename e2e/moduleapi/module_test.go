package moduleapi

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite golden files") //nolint:gochecknoglobals // the -update flag

// TestModuleObjects follows Module objects through a module's life: Ready
// after it is enabled, Failed with the error after its chart breaks (with
// the Event on the object), Disabled after it is disabled, and removed
// once the module is gone.
func TestModuleObjects(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-mo-echo", "moEcho")
	h.chartModule("020-mo-idle", "moIdle")
	h.SetConfig(map[string]string{"moEchoEnabled": "true"})
	op := h.start()
	op.WaitReady()

	echo := h.waitModule("mo-echo", "Ready", conditionTrue(v1.ConditionReady))
	want := v1.ModuleStatus{Phase: v1.PhaseReady, Enabled: true, EnabledBy: "configmap", ChartVersion: "1.2.3",
		Release: &v1.ReleaseStatus{Name: "mo-echo", Namespace: h.Namespace, Revision: 1}}
	if diff := cmp.Diff(want, echo.Status, cmpStatus); diff != "" {
		t.Errorf("mo-echo status (-want +got):\n%s", diff)
	}
	if echo.Status.ValuesChecksum == "" || echo.Status.LastRunTime == nil || echo.Status.ObservedGeneration != echo.Generation {
		t.Errorf("mo-echo status %+v lacks the values checksum, last run time or observed generation", echo.Status)
	}
	idle := h.waitModule("mo-idle", "Disabled", func(m v1.Module) bool { return m.Status.Phase == v1.PhaseDisabled })
	if meta.FindStatusCondition(idle.Status.Conditions, v1.ConditionReady) != nil {
		t.Errorf("disabled mo-idle has a Ready condition: %+v", idle.Status.Conditions)
	}
	h.goldenTable(t, "testdata/modules-table.golden", "mo-echo", "mo-idle")

	// A broken chart: Failed, Stalled, the error, and the Event on the object.
	h.SetConfig(map[string]string{"moEchoEnabled": "true", "moEcho": "fail: true\n"})
	failed := h.waitModule("mo-echo", "Stalled", conditionTrue(v1.ConditionStalled))
	if failed.Status.Phase != v1.PhaseFailed || !strings.Contains(failed.Status.LastError, "broken on purpose") {
		t.Errorf("mo-echo = %s with error %q, want Failed with \"broken on purpose\"", failed.Status.Phase, failed.Status.LastError)
	}
	h.waitModuleEvent(failed, "ModuleRunFailed")

	// Fixed, then disabled: Disabled, no Ready condition, release gone.
	h.SetConfig(map[string]string{"moEchoEnabled": "true"})
	h.waitModule("mo-echo", "Ready again", conditionTrue(v1.ConditionReady))
	h.SetConfig(map[string]string{"moEchoEnabled": "false"})
	h.waitModule("mo-echo", "Disabled", func(m v1.Module) bool {
		return m.Status.Phase == v1.PhaseDisabled && meta.FindStatusCondition(m.Status.Conditions, v1.ConditionReady) == nil
	})
	h.Poll("release mo-echo uninstalled", func() bool { return h.ReleaseRevision("mo-echo") == 0 })

	// The module is gone: its object is removed at the next start.
	h.Stop()
	if err := os.RemoveAll(filepath.Join(h.modules, "020-mo-idle")); err != nil {
		t.Fatal(err)
	}
	h.start().WaitReady()
	h.Poll("module object mo-idle removed", func() bool { _, ok := h.module("mo-idle"); return !ok })
	if _, ok := h.module("mo-echo"); !ok {
		t.Error("module object mo-echo removed, want it kept")
	}
}

// cmpStatus compares what a test can know in advance.
var cmpStatus = cmp.Options{ //nolint:gochecknoglobals // a constant option set
	cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".Conditions", ".LastRunTime", ".LastRunDuration", ".ValuesChecksum", ".ObservedGeneration":
			return true
		}
		return false
	}, cmp.Ignore()),
}

// waitModuleEvent waits for an Event with reason regarding the module's
// object, found as kubectl describe finds them: by the involved object's
// kind, name, empty namespace and uid, in every namespace.
func (h *harness) waitModuleEvent(m v1.Module, reason string) {
	h.T.Helper()
	sel := "involvedObject.kind=Module,involvedObject.name=" + m.Name + ",involvedObject.namespace=,involvedObject.uid=" + string(m.UID)
	h.Poll("event "+reason+" of module "+m.Name, func() bool {
		list, err := h.Client.CoreV1().Events("").List(h.T.Context(), metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			h.T.Fatalf("list events: %v", err)
		}
		for i := range list.Items {
			if list.Items[i].Reason == reason {
				return true
			}
		}
		return false
	})
}

// goldenTable compares the table the API server serves for the named
// Module objects (what kubectl get modules -o wide prints) with a golden
// file; times are replaced by placeholders.
func (h *harness) goldenTable(t *testing.T, golden string, names ...string) {
	t.Helper()
	raw, err := h.Client.CoreV1().RESTClient().Get().AbsPath("/apis", v1.Group, v1.Version, v1.ResourceModules).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("get modules as table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range table.ColumnDefinitions {
		b.WriteString(c.Name + " (" + c.Type + ", priority " + strconv.Itoa(int(c.Priority)) + ")\n")
	}
	for _, row := range table.Rows {
		if len(row.Cells) == 0 || !contains(names, row.Cells[0]) {
			continue
		}
		cells := make([]string, len(row.Cells))
		for i, c := range row.Cells {
			cells[i] = jsonCell(c)
			if table.ColumnDefinitions[i].Type == "date" && cells[i] != "" {
				cells[i] = "<time>"
			}
		}
		b.WriteString(strings.Join(cells, " | ") + "\n")
	}
	got := strings.ReplaceAll(b.String(), h.Namespace, "<namespace>")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil { //nolint:gosec // a golden file
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("kubectl get modules table (-want +got):\n%s", diff)
	}
}

func jsonCell(c any) string {
	if c == nil {
		return ""
	}
	if s, ok := c.(string); ok {
		return s
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func contains(names []string, cell any) bool {
	s, _ := cell.(string)
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}
