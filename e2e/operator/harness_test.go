package operator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// harness runs the operator binary over a copy of e2e/testdata/operator in
// a namespace of its own. The fixture's hooks append to a trace file.
type harness struct {
	*operatortest.Harness
	dir   string // modules/ and global-hooks/ live here
	trace string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "operator")
	if out, err := exec.CommandContext(t.Context(), "cp", "-a", src+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy fixture: %v: %s", err, out)
	}
	return &harness{Harness: operatortest.New(t, cp, bin), dir: dir, trace: filepath.Join(dir, "trace")}
}

// start runs the operator with short retry delays; args are extra flags.
func (h *harness) start(args ...string) *operatortest.Operator {
	h.T.Helper()
	return h.Start(operatortest.Options{
		ModulesDir:     filepath.Join(h.dir, "modules"),
		GlobalHooksDir: filepath.Join(h.dir, "global-hooks"),
		Args:           append([]string{"--retry-delay=200ms", "--retry-max-delay=1s"}, args...),
		Env:            append(os.Environ(), "TRACE_FILE="+h.trace, "TRACE_LIB="+filepath.Join(h.dir, "trace.sh")),
	})
}

// setConfigKey sets one key of the operator's ConfigMap, keeping the others
// (also those hooks wrote).
func (h *harness) setConfigKey(key, value string) {
	h.T.Helper()
	cms := h.Client.CoreV1().ConfigMaps(h.Namespace)
	cm, err := cms.Get(h.T.Context(), "addon-operator", metav1.GetOptions{})
	if err != nil {
		h.T.Fatalf("get ConfigMap: %v", err)
	}
	cm.Data[key] = value
	if _, err := cms.Update(h.T.Context(), cm, metav1.UpdateOptions{}); err != nil {
		h.T.Fatalf("update ConfigMap: %v", err)
	}
}

// readTrace returns the trace lines written so far.
func (h *harness) readTrace() []string {
	data, err := os.ReadFile(h.trace)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	return strings.Fields(string(data))
}

// expectTrace waits until the trace has grown by len(want) lines since
// mark and checks they are exactly want. It returns the new mark.
func (h *harness) expectTrace(mark int, want ...string) int {
	h.T.Helper()
	h.Poll(fmt.Sprintf("trace lines %v", want), func() bool { return len(h.readTrace()) >= mark+len(want) })
	got := h.readTrace()[mark:]
	if !slices.Equal(got, want) {
		h.T.Fatalf("trace after line %d:\n got  %v\n want %v", mark, got, want)
	}
	return mark + len(want)
}

// alphaData returns the data of the ConfigMap that module alpha's release
// renders, nil when it does not exist.
func (h *harness) alphaData() map[string]string {
	h.T.Helper()
	return h.ConfigMapData("alpha")
}
