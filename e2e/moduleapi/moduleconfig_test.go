package moduleapi

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
)

// setModuleConfig creates or replaces the spec of a ModuleConfig; the
// object is deleted at the end of the test.
func (h *harness) setModuleConfig(name string, spec map[string]any) {
	h.T.Helper()
	res := h.dyn.Resource(v1.ModuleConfigsResource())
	u, err := res.Get(h.T.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig, "metadata": map[string]any{"name": name}, "spec": spec,
		}}
		if _, err := res.Create(h.T.Context(), u, metav1.CreateOptions{}); err != nil {
			h.T.Fatalf("create moduleconfig %s: %v", name, err)
		}
		h.T.Cleanup(func() { _ = res.Delete(h.T.Context(), name, metav1.DeleteOptions{}) })
		return
	}
	if err != nil {
		h.T.Fatal(err)
	}
	u.Object["spec"] = spec
	if _, err := res.Update(h.T.Context(), u, metav1.UpdateOptions{}); err != nil {
		h.T.Fatalf("update moduleconfig %s: %v", name, err)
	}
}

// moduleConfig returns a ModuleConfig object.
func (h *harness) moduleConfig(name string) v1.ModuleConfig {
	h.T.Helper()
	u, err := h.dyn.Resource(v1.ModuleConfigsResource()).Get(h.T.Context(), name, metav1.GetOptions{})
	if err != nil {
		h.T.Fatalf("get moduleconfig %s: %v", name, err)
	}
	var mc v1.ModuleConfig
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &mc); err != nil {
		h.T.Fatal(err)
	}
	return mc
}

// waitModuleConfig waits until the object's status is about its current
// generation and its message contains part.
func (h *harness) waitModuleConfig(name, part string) v1.ModuleConfig {
	h.T.Helper()
	var mc v1.ModuleConfig
	h.Poll("moduleconfig "+name+" status "+part, func() bool {
		mc = h.moduleConfig(name)
		return mc.Status.ObservedGeneration == mc.Generation && strings.Contains(mc.Status.Message, part)
	})
	return mc
}

// greeting returns what the module's release rendered, "" without it.
func (h *harness) greeting(module string) string {
	h.T.Helper()
	cm := h.ConfigMapData(module + "-out")
	return cm["greeting"]
}

// TestModuleConfigSource configures a module with a ModuleConfig: enable
// it, change a setting, reject an invalid one (the last valid one stays),
// name an unknown module, disable it.
func TestModuleConfigSource(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-mc-echo", "mcEcho")
	h.setModuleConfig("mc-echo", map[string]any{"enabled": true, "settings": map[string]any{"greeting": "hi"}, "version": int64(1)})
	op := h.start("--config-source=moduleconfig")
	op.WaitReady()
	h.Poll("greeting hi", func() bool { return h.greeting("mc-echo") == "hi" })
	mc := h.waitModuleConfig("mc-echo", "in use")
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, v1.ConditionReady) {
		t.Errorf("mc-echo conditions = %+v, want Ready", mc.Status.Conditions)
	}
	if m := h.waitModule("mc-echo", "Ready", conditionTrue(v1.ConditionReady)); m.Status.EnabledBy != "moduleconfig" {
		t.Errorf("mc-echo enabled by %q, want moduleconfig", m.Status.EnabledBy)
	}

	h.setModuleConfig("mc-echo", map[string]any{"enabled": true, "settings": map[string]any{"greeting": "bye"}})
	h.Poll("greeting bye", func() bool { return h.greeting("mc-echo") == "bye" })
	rev := h.ReleaseRevision("mc-echo")

	h.setModuleConfig("mc-echo", map[string]any{"enabled": true, "settings": map[string]any{"greeting": strings.Repeat("x", 30)}})
	mc = h.waitModuleConfig("mc-echo", "not in use")
	if !strings.Contains(mc.Status.Message, "greeting") || !meta.IsStatusConditionTrue(mc.Status.Conditions, v1.ConditionStalled) {
		t.Errorf("mc-echo status = %+v, want the rejected field named and Stalled", mc.Status)
	}
	if got := h.greeting("mc-echo"); got != "bye" || h.ReleaseRevision("mc-echo") != rev {
		t.Errorf("after an invalid setting: greeting %q at revision %d, want bye at %d", got, h.ReleaseRevision("mc-echo"), rev)
	}

	h.setModuleConfig("mc-nope", map[string]any{"enabled": true})
	h.waitModuleConfig("mc-nope", "no module named mc-nope")

	h.setModuleConfig("mc-echo", map[string]any{"enabled": false})
	h.Poll("release mc-echo uninstalled", func() bool { return h.ReleaseRevision("mc-echo") == 0 })
	h.waitModule("mc-echo", "Disabled", func(m v1.Module) bool { return m.Status.Phase == v1.PhaseDisabled })
}

// TestConfigMigrate migrates a ConfigMap with values and Enabled keys to
// ModuleConfigs, and the operator on ModuleConfigs keeps the same
// releases: no upgrade, the same rendered values.
func TestConfigMigrate(t *testing.T) {
	operatortest.InstallAPICRDs(t, cp.Config)
	h := newHarness(t)
	h.chartModule("010-mg-one", "mgOne")
	h.chartModule("020-mg-two", "mgTwo")
	h.chartModule("030-mg-off", "mgOff")
	h.SetConfig(map[string]string{
		"global": "clusterName: test\n", "mgOne": "greeting: one\n", "mgOneEnabled": "true",
		"mgTwoEnabled": "true", "mgOff": "greeting: never\n", "mgOffEnabled": "false",
	})
	op := h.start()
	op.WaitReady()
	h.Poll("greetings", func() bool { return h.greeting("mg-one") == "one" && h.greeting("mg-two") == "hello" })
	revs := map[string]int{"mg-one": h.ReleaseRevision("mg-one"), "mg-two": h.ReleaseRevision("mg-two"), "mg-off": h.ReleaseRevision("mg-off")}
	h.Stop()

	migrate := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"config", "migrate", "--kube-config=" + cp.Kubeconfig, "--namespace=" + h.Namespace}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("config migrate %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	dry := migrate("--dry-run")
	for _, want := range []string{"name: global", "clusterName: test", "name: mg-one", "greeting: one", "name: mg-off", "enabled: false"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if _, err := h.dyn.Resource(v1.ModuleConfigsResource()).Get(t.Context(), "mg-one", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after a dry run moduleconfig mg-one: %v, want not found", err)
	}
	migrate()
	for _, name := range []string{"global", "mg-one", "mg-two", "mg-off"} {
		t.Cleanup(func() {
			_ = h.dyn.Resource(v1.ModuleConfigsResource()).Delete(context.WithoutCancel(t.Context()), name, metav1.DeleteOptions{})
		})
	}
	if got := h.moduleConfig("mg-one").Spec; !cmp.Equal(got.Settings, map[string]any{"greeting": "one"}) || got.Enabled == nil || !*got.Enabled {
		t.Errorf("moduleconfig mg-one spec = %+v", got)
	}

	op = h.start("--config-source=moduleconfig")
	op.WaitReady()
	for _, name := range []string{"mg-one", "mg-two", "mg-off"} {
		h.waitModuleConfig(name, "in use")
	}
	h.waitModuleConfig("global", "in use")
	got := map[string]int{"mg-one": h.ReleaseRevision("mg-one"), "mg-two": h.ReleaseRevision("mg-two"), "mg-off": h.ReleaseRevision("mg-off")}
	if diff := cmp.Diff(revs, got); diff != "" {
		t.Errorf("release revisions after the migration (-before +after):\n%s", diff)
	}
	if h.greeting("mg-one") != "one" || h.greeting("mg-two") != "hello" {
		t.Errorf("greetings after the migration: %q, %q", h.greeting("mg-one"), h.greeting("mg-two"))
	}
}
