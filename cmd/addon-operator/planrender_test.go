package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeversion"
)

// kubeVersionModules is a modules dir with one module whose chart prints
// the Kubernetes version it renders for.
func kubeVersionModules(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kv\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n"
	if err := os.MkdirAll(filepath.Join(dir, "kv", "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kv", "templates", "cm.yaml"), []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlanRenderKubeVersion(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("KUBE_CONFIG", "")
	t.Setenv("HOME", t.TempDir())
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major": "1", "minor": "33", "gitVersion": "v1.33.4"}`))
	}))
	defer server.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()

	modules := kubeVersionModules(t)
	tests := []struct {
		name      string
		args      []string
		want      string
		wantError string // in stderr
	}{
		{name: "no cluster: the build's version", want: kubeversion.Default()},
		{name: "the cluster's", args: []string{"--kubeconfig", writeKubeconfig(t, server.URL)}, want: "v1.33.4"},
		{name: "--kube-version over the cluster's", args: []string{"--kubeconfig", writeKubeconfig(t, server.URL), "--kube-version", "1.31.2"}, want: "v1.31.2"},
		{name: "unreachable cluster: the build's version", args: []string{"--kubeconfig", writeKubeconfig(t, down.URL)}, want: kubeversion.Default(), wantError: "the cluster's version is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"plan", "render", "kv", "--modules-dir", modules, "--global-hooks-dir", t.TempDir()}, tt.args...)
			stdout, stderr, code := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", code, stderr)
			}
			if want := `kube: "` + tt.want + `"`; !strings.Contains(stdout, want) {
				t.Errorf("output lacks %s:\n%s", want, stdout)
			}
			if !strings.Contains(stderr, tt.wantError) || (tt.wantError == "" && stderr != "") {
				t.Errorf("stderr = %q, want %q", stderr, tt.wantError)
			}
		})
	}
}
