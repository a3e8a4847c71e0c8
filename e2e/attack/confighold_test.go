package attack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/config"
)

// configHoldObjects is how many ConfigMaps the test module renders,
// besides its Secret: what an empty configuration would delete.
const configHoldObjects = 20

// configHoldToken is the module's setting that ends up in its Secret.
const configHoldToken = "t0k-of-the-db" //nolint:gosec // G101: a test fixture, not a credential

// configHoldEnv runs the operator over one module with a chart.
type configHoldEnv struct {
	*operatortest.Harness
	dyn     dynamic.Interface
	modules string
	args    []string
}

func configHoldSetup(t *testing.T, args ...string) *configHoldEnv {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &configHoldEnv{Harness: operatortest.New(t, cp, bin), dyn: dyn, modules: filepath.Join(t.TempDir(), "modules"),
		args: append([]string{"--retry-delay=200ms", "--retry-max-delay=1s"}, args...)}
	e.write("010-hold-echo/Chart.yaml", "apiVersion: v2\nname: hold-echo\nversion: 1.0.0\n")
	e.write("010-hold-echo/values.yaml", "holdEcho:\n  greeting: hello\n  token: \"\"\n")
	e.write("010-hold-echo/openapi/config-values.yaml",
		"type: object\nproperties:\n  greeting:\n    type: string\n    maxLength: 20\n  token:\n    type: string\n")
	e.write("010-hold-echo/templates/objects.yaml", fmt.Sprintf(`{{- range $i := until %d }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: hold-echo-out-{{ $i }}
data:
  greeting: {{ $.Values.holdEcho.greeting | quote }}
{{- end }}
---
apiVersion: v1
kind: Secret
metadata:
  name: hold-echo-token
stringData:
  token: {{ .Values.holdEcho.token | quote }}
`, configHoldObjects))
	return e
}

func (e *configHoldEnv) write(rel, content string) {
	e.T.Helper()
	p := filepath.Join(e.modules, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.T.Fatal(err)
	}
}

func (e *configHoldEnv) start() *operatortest.Operator {
	e.T.Helper()
	return e.Start(operatortest.Options{ModulesDir: e.modules, GlobalHooksDir: e.T.TempDir(), Args: e.args})
}

// deployed counts the module's ConfigMaps and returns its Secret's token
// ("" without the Secret).
func (e *configHoldEnv) deployed() (configMaps int, token string) {
	e.T.Helper()
	ctx := e.T.Context()
	for i := range configHoldObjects {
		if _, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Get(ctx, fmt.Sprintf("hold-echo-out-%d", i), metav1.GetOptions{}); err == nil {
			configMaps++
		}
	}
	if s, err := e.Client.CoreV1().Secrets(e.Namespace).Get(ctx, "hold-echo-token", metav1.GetOptions{}); err == nil {
		token = string(s.Data["token"])
	}
	return configMaps, token
}

// waitDeployed waits until every object is there with the token.
func (e *configHoldEnv) waitDeployed() {
	e.T.Helper()
	e.Poll("the module's objects deployed", func() bool {
		n, token := e.deployed()
		return n == configHoldObjects && token == configHoldToken
	})
}

// assertKept fails unless the module's release and every object remain,
// the token unchanged.
func (e *configHoldEnv) assertKept(rev int) {
	e.T.Helper()
	if n, token := e.deployed(); n != configHoldObjects || token != configHoldToken {
		e.T.Errorf("after the restart: %d of %d ConfigMaps, token %q; want all, token %q", n, configHoldObjects, token, configHoldToken)
	}
	if got := e.ReleaseRevision("hold-echo"); got != rev {
		e.T.Errorf("release hold-echo at revision %d, want %d (untouched)", got, rev)
	}
}

// assertHeld checks the three signals of a held configuration: /readyz,
// the metric and an Event, each naming reason.
func (e *configHoldEnv) assertHeld(op *operatortest.Operator, reason string) {
	e.T.Helper()
	op.WaitCondition("ConfigHeld", reason)
	op.WaitMetric("addon_operator_config_held", map[string]string{"reason": reason}, "is 1", func(v float64) bool { return v == 1 })
	e.Poll("a ConfigHeld Event naming "+reason, func() bool {
		list, err := e.Client.CoreV1().Events(e.Namespace).List(e.T.Context(), metav1.ListOptions{FieldSelector: "reason=ConfigHeld"})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if ev := &list.Items[i]; ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, reason) {
				return true
			}
		}
		return false
	})
}

// waitUninstalled waits until the confirmation has uninstalled the module.
func (e *configHoldEnv) waitUninstalled(op *operatortest.Operator) {
	e.T.Helper()
	e.Poll("release hold-echo uninstalled", func() bool { return e.ReleaseRevision("hold-echo") == 0 })
	e.Poll("the module's objects deleted", func() bool {
		n, token := e.deployed()
		return n == 0 && token == ""
	})
	op.WaitMetric("addon_operator_config_held", nil, "is 0 for every reason", func(v float64) bool { return v == 0 })
}

// TestAttackerDeletesConfigMapWhileOperatorIsDown deletes the ConfigMap
// while the operator is stopped: the restart must hold the configuration
// saved before it, not uninstall the module and reset its Secret, and say
// so on /readyz, in the metric and in an Event. Creating the ConfigMap
// empty with the confirmation annotation then applies the empty
// configuration.
func TestAttackerDeletesConfigMapWhileOperatorIsDown(t *testing.T) {
	e := configHoldSetup(t)
	e.SetConfig(map[string]string{"holdEchoEnabled": "true", "holdEcho": "token: " + configHoldToken + "\n"})
	op := e.start()
	op.WaitReady()
	e.waitDeployed()
	rev := e.ReleaseRevision("hold-echo")
	op.Stop()

	if err := e.Client.CoreV1().ConfigMaps(e.Namespace).Delete(t.Context(), "addon-operator", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	op = e.start()
	op.WaitReady()
	e.assertHeld(op, config.HoldConfigMapMissing)
	e.assertKept(rev)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "addon-operator",
		Annotations: map[string]string{config.ConfirmEmptyAnnotation: "true"}}}
	if _, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitUninstalled(op)
}

// TestAttackerDeletesAllModuleConfigsWhileOperatorIsDown is the same with
// --config-source=moduleconfig: every ModuleConfig deleted while the
// operator is stopped. Creating ModuleConfig global with the confirmation
// annotation then applies the empty configuration.
func TestAttackerDeletesAllModuleConfigsWhileOperatorIsDown(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	e := configHoldSetup(t, "--config-source=moduleconfig")
	e.setModuleConfig("hold-echo", nil, map[string]any{"enabled": true, "settings": map[string]any{"token": configHoldToken}})
	op := e.start()
	op.WaitReady()
	e.waitDeployed()
	rev := e.ReleaseRevision("hold-echo")
	op.Stop()

	e.deleteModuleConfig("hold-echo")
	reason := config.HoldNoModuleConfigs
	if e.moduleConfigsLeft() {
		// Another test's objects, of modules this operator does not
		// have: the source exists but configures nothing.
		reason = config.HoldEmptyUnconfirmed
	}
	op = e.start()
	op.WaitReady()
	e.assertHeld(op, reason)
	e.assertKept(rev)

	e.setModuleConfig("global", map[string]string{config.ConfirmEmptyAnnotation: "true"}, map[string]any{})
	e.waitUninstalled(op)
}

// TestAttackerStoresInvalidModuleConfigWhileOperatorIsDown writes an
// invalid ModuleConfig while the operator, and so its admission webhook,
// is stopped: after the restart the module keeps its last accepted
// settings, as the object's status says.
func TestAttackerStoresInvalidModuleConfigWhileOperatorIsDown(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	e := configHoldSetup(t, "--config-source=moduleconfig")
	e.setModuleConfig("hold-echo", nil, map[string]any{"enabled": true, "settings": map[string]any{"token": configHoldToken, "greeting": "saved"}})
	op := e.start()
	op.WaitReady()
	e.waitDeployed()
	rev := e.ReleaseRevision("hold-echo")
	op.Stop()

	e.setModuleConfig("hold-echo", nil, map[string]any{"enabled": true, "settings": map[string]any{"greeting": strings.Repeat("x", 30)}})
	op = e.start()
	op.WaitReady()
	e.Poll("hold-echo's status to say it is not in use", func() bool {
		return strings.Contains(e.moduleConfigMessage("hold-echo"), "not in use")
	})
	if msg := e.moduleConfigMessage("hold-echo"); !strings.Contains(msg, "the last accepted spec stays in force") {
		t.Errorf("status message %q, want it to say the last accepted spec stays in force", msg)
	}
	e.assertKept(rev)
	cm, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Get(t.Context(), "hold-echo-out-0", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "saved" {
		t.Errorf("hold-echo-out-0 = %v, %v; want greeting \"saved\"", cm.Data, err)
	}
}

// setModuleConfig creates or replaces a ModuleConfig; it is deleted at the
// end of the test.
func (e *configHoldEnv) setModuleConfig(name string, annotations map[string]string, spec map[string]any) {
	e.T.Helper()
	res := e.dyn.Resource(v1.ModuleConfigsResource())
	ctx := e.T.Context()
	u, err := res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
			"metadata": map[string]any{"name": name}, "spec": spec}}
		u.SetAnnotations(annotations)
		if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			e.T.Fatalf("create moduleconfig %s: %v", name, err)
		}
		e.T.Cleanup(func() { _ = res.Delete(e.T.Context(), name, metav1.DeleteOptions{}) })
		return
	}
	if err != nil {
		e.T.Fatal(err)
	}
	u.Object["spec"] = spec
	u.SetAnnotations(annotations)
	if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		e.T.Fatalf("update moduleconfig %s: %v", name, err)
	}
}

func (e *configHoldEnv) deleteModuleConfig(name string) {
	e.T.Helper()
	res := e.dyn.Resource(v1.ModuleConfigsResource())
	if err := res.Delete(e.T.Context(), name, metav1.DeleteOptions{}); err != nil {
		e.T.Fatal(err)
	}
	e.Poll("moduleconfig "+name+" gone", func() bool {
		_, err := res.Get(e.T.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func (e *configHoldEnv) moduleConfigsLeft() bool {
	e.T.Helper()
	list, err := e.dyn.Resource(v1.ModuleConfigsResource()).List(e.T.Context(), metav1.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return len(list.Items) > 0
}

func (e *configHoldEnv) moduleConfigMessage(name string) string {
	e.T.Helper()
	u, err := e.dyn.Resource(v1.ModuleConfigsResource()).Get(e.T.Context(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
	if gen, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); gen != u.GetGeneration() {
		return ""
	}
	return msg
}
