package moduleapi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// harness runs the operator over modules the test writes, with the
// addon-operator.io CRDs installed (unless the test removes them).
type harness struct {
	*operatortest.Harness
	dyn     dynamic.Interface
	modules string // the modules directory
	global  string // the global hooks directory
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := &harness{Harness: operatortest.New(t, cp, bin), dyn: dyn,
		modules: filepath.Join(dir, "modules"), global: filepath.Join(dir, "global-hooks")}
	for _, d := range []string{h.modules, h.global} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// start runs the operator with short retry delays; args are extra flags.
func (h *harness) start(args ...string) *operatortest.Operator {
	h.T.Helper()
	return h.Start(operatortest.Options{
		ModulesDir: h.modules, GlobalHooksDir: h.global,
		Args: append([]string{"--retry-delay=200ms", "--retry-max-delay=1s"}, args...),
	})
}

// writeFile writes a file under the modules directory.
func (h *harness) writeFile(rel, content string) {
	h.T.Helper()
	p := filepath.Join(h.modules, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil { //nolint:gosec // test fixture
		h.T.Fatal(err)
	}
}

// chartModule writes a module with a chart that renders one ConfigMap
// holding its "greeting" value, and fails to render when its "fail" value
// is set.
func (h *harness) chartModule(dir, key string) {
	h.T.Helper()
	h.writeFile(dir+"/Chart.yaml", "apiVersion: v2\nname: "+key+"\nversion: 1.2.3\n")
	h.writeFile(dir+"/values.yaml", key+":\n  greeting: hello\n")
	h.writeFile(dir+"/openapi/config-values.yaml",
		"type: object\nproperties:\n  greeting:\n    type: string\n    maxLength: 20\n  fail:\n    type: boolean\n")
	h.writeFile(dir+"/templates/cm.yaml", fmt.Sprintf(`{{- if .Values.%[1]s.fail }}{{ fail "broken on purpose" }}{{ end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[2]s-out
data:
  greeting: {{ .Values.%[1]s.greeting | quote }}
`, key, dir[strings.Index(dir, "-")+1:]))
}

// module returns the Module object of name, false when there is none.
func (h *harness) module(name string) (v1.Module, bool) {
	h.T.Helper()
	u, err := h.dyn.Resource(v1.ModulesResource()).Get(h.T.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return v1.Module{}, false
	}
	if err != nil {
		h.T.Fatalf("get module %s: %v", name, err)
	}
	return toModule(h.T, u), true
}

func toModule(t *testing.T, u *unstructured.Unstructured) v1.Module {
	t.Helper()
	var m v1.Module
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &m); err != nil {
		t.Fatalf("decode module %s: %v", u.GetName(), err)
	}
	return m
}

// waitModule polls the Module object of name until cond holds.
func (h *harness) waitModule(name, what string, cond func(v1.Module) bool) v1.Module {
	h.T.Helper()
	var last v1.Module
	h.Poll(fmt.Sprintf("module object %s %s", name, what), func() bool {
		m, ok := h.module(name)
		last = m
		return ok && cond(m)
	})
	return last
}

// conditionTrue is kubectl wait --for=condition=<typ>: the object has the
// condition with status True.
func conditionTrue(typ string) func(v1.Module) bool {
	return func(m v1.Module) bool { return meta.IsStatusConditionTrue(m.Status.Conditions, typ) }
}
