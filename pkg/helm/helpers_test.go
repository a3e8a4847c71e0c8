package helm

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

const testNamespace = "addon-operator"

// writeFiles creates files (path relative to dir -> content) under a new
// temporary dir and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testEnv is a Client over Helm's memory storage and a kube client that
// accepts everything and creates nothing, or kube when set.
type testEnv struct {
	client *Client
	store  *storage.Storage
	kube   kube.Interface
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	mem := driver.NewMemory()
	mem.SetNamespace(testNamespace)
	env := &testEnv{store: storage.Init(mem)}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	env.client = newClient(Options{Namespace: testNamespace, Logger: logger}, func(debug action.DebugLog) (*action.Configuration, error) {
		return env.config(debug), nil
	})
	return env
}

func (e *testEnv) config(debug action.DebugLog) *action.Configuration {
	if debug == nil {
		debug = func(string, ...any) {}
	}
	var kc kube.Interface = &kubefake.PrintingKubeClient{Out: io.Discard}
	if e.kube != nil {
		kc = e.kube
	}
	return &action.Configuration{
		Releases:     e.store,
		KubeClient:   kc,
		Capabilities: chartutil.DefaultCapabilities.Copy(),
		Log:          debug,
	}
}

// echoChart is a module without Chart.yaml: one ConfigMap and one hook
// ConfigMap, both showing the module's values.
func echoChart(t *testing.T, hookData string) string {
	t.Helper()
	return writeFiles(t, map[string]string{
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: echo
data:
  greeting: {{ .Values.echo.greeting | quote }}
`,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: echo-hook
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
data:
  note: ` + hookData + "\n",
		"values.yaml": "echo:\n  greeting: from-values-yaml\n",
	})
}

func echoRelease(dir, greeting string) Release {
	return Release{
		Name:     "echo",
		ChartDir: dir,
		Values:   map[string]any{"global": map[string]any{}, "echo": map[string]any{"greeting": greeting}},
	}
}
