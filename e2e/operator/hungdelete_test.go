package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// goneDeleteHook is module gone's afterDeleteHelm hook: it writes "start"
// to $HUNG_TRACE, sleeps $HUNG_SLEEP seconds and writes "end".
const goneDeleteHook = `#!/bin/bash
if [ "$1" = --config ]; then
	printf 'configVersion: v1\nafterDeleteHelm: 1\n'
	exit 0
fi
echo start >>"$HUNG_TRACE"
sleep "$HUNG_SLEEP"
echo end >>"$HUNG_TRACE"
`

// pingHook is a global hook on the main queue: each run appends its
// binding contexts to $PING_TRACE. It watches the ConfigMap named ping
// in the operator's namespace.
const pingHook = `#!/bin/bash
if [ "$1" = --config ]; then
	printf 'configVersion: v1\nkubernetes:\n- name: ping\n  apiVersion: v1\n  kind: ConfigMap\n  nameSelector: {matchNames: [ping]}\n  namespace: {nameSelector: {matchNames: [%s]}}\n' "$ADDON_OPERATOR_NAMESPACE"
	exit 0
fi
cat "$BINDING_CONTEXT_PATH" >>"$PING_TRACE"
echo >>"$PING_TRACE"
`

// writeTreeFiles writes files below dir, executable under hooks/.
func writeTreeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o600)
		if strings.Contains(name, "hooks/") {
			mode = 0o700
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHungAfterDeleteHelmHoldsNothing: module gone is disabled and its
// afterDeleteHelm hook sleeps for longer than every wait of the test.
// While it runs, with one module worker, a change of module kept's section
// is applied to its release, and a global hook on the main queue runs for
// a new ConfigMap. Gone's release is uninstalled before its hook started,
// and gone stays Deleting until its hook ends.
func TestHungAfterDeleteHelmHoldsNothing(t *testing.T) {
	t.Parallel()
	h := operatortest.New(t, cp, bin)
	dir := t.TempDir()
	writeTreeFiles(t, dir, map[string]string{
		"modules/values.yaml":                "goneEnabled: true\nkeptEnabled: true\n",
		"modules/010-gone/hooks/delete":      goneDeleteHook,
		"modules/010-gone/templates/cm.yaml": configMapTemplate("gone"),
		"modules/020-kept/values.yaml":       "kept:\n  message: before\n",
		"modules/020-kept/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n" +
			"data:\n  message: {{ .Values.kept.message | quote }}\n",
		"global-hooks/hooks/ping": pingHook,
	})
	trace, ping := filepath.Join(dir, "trace"), filepath.Join(dir, "ping")
	h.SetConfig(map[string]string{})
	h.Start(operatortest.Options{
		ModulesDir: filepath.Join(dir, "modules"), GlobalHooksDir: filepath.Join(dir, "global-hooks"),
		Args: []string{"--module-workers=1"},
		Env: append(os.Environ(), "HUNG_TRACE="+trace, "PING_TRACE="+ping,
			fmt.Sprintf("HUNG_SLEEP=%d", int((2*operatortest.Timeout).Seconds()))),
	})
	h.WaitReady()
	if h.ReleaseRevision("gone") == 0 {
		t.Fatal("gone has no release before it is disabled")
	}

	h.SetConfig(map[string]string{"goneEnabled": "false"})
	h.Poll("gone's afterDeleteHelm hook to start", func() bool {
		data, err := os.ReadFile(trace)
		return err == nil && strings.Contains(string(data), "start")
	})

	h.SetConfig(map[string]string{"goneEnabled": "false", "kept": "message: after\n"})
	h.Poll("kept's release to show its new section", func() bool { return h.ConfigMapData("kept")["message"] == "after" })
	ctx := context.WithoutCancel(t.Context())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ping"}}
	if _, err := h.Client.CoreV1().ConfigMaps(h.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap ping: %v", err)
	}
	t.Cleanup(func() { _ = h.Client.CoreV1().ConfigMaps(h.Namespace).Delete(ctx, "ping", metav1.DeleteOptions{}) })
	h.Poll("the global hook's run for ConfigMap ping", func() bool {
		data, err := os.ReadFile(ping)
		return err == nil && strings.Contains(string(data), `"Added"`)
	})

	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(data)); len(got) != 1 || got[0] != "start" {
		t.Errorf("gone's hook trace %v, want it still running (start only)", got)
	}
	if rev := h.ReleaseRevision("gone"); rev != 0 {
		t.Errorf("gone's release at revision %d while its afterDeleteHelm hook runs, want it uninstalled first", rev)
	}
	if m, _ := h.Newest().Module("gone"); m.Phase != status.PhaseDeleting {
		t.Errorf("gone's phase %q while its afterDeleteHelm hook runs, want %q", m.Phase, status.PhaseDeleting)
	}
}
