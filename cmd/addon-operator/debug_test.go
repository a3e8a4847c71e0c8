package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// debugSource is a server.Source over fixed data: two modules, one of them
// failing, and two queues.
type debugSource struct{}

func (debugSource) Ready() bool { return true }

func (debugSource) Conditions() []status.Condition { return nil }

func (debugSource) Modules() []status.ModuleStatus {
	return []status.ModuleStatus{
		{Name: "ingress", Enabled: true, By: status.SourceConfigMap, Reason: "ingressEnabled: true in the ConfigMap", Phase: status.PhaseFailed, Revision: 2,
			LastError: "upgrade release \"ingress\":\ntimed out", Namespace: "ingress", Version: "1.2.0", Requires: []string{"cert-manager"},
			Message: "waiting for Deployment ingress/controller: Available: 1/3"},
		{Name: "legacy", By: status.SourceRequirement, Reason: "requires crd, which is disabled", Phase: status.PhaseDisabled, Namespace: "ops",
			Message: "requires crd, which is disabled"},
	}
}

func (debugSource) QueueStatuses() []status.QueueStatus {
	queued := time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)
	return []status.QueueStatus{
		{Name: "main", Status: "running", Tasks: []status.TaskStatus{
			{Description: "ModuleRun ingress", Queued: queued, Failures: 3, LastError: "helm: timed out"},
			{Description: "Converge", Queued: queued.Add(time.Second)},
		}},
		{Name: "monitors", Status: "idle", Tasks: []status.TaskStatus{}},
	}
}

func (debugSource) GlobalValues() values.Values {
	return values.Values{"clusterName": "test", "enabledModules": []any{"ingress"}}
}
func (debugSource) GlobalConfig() values.Values { return values.Values{"clusterName": "test"} }

func (debugSource) ModuleValues(string) (values.Values, error) {
	return values.Values{"global": map[string]any{"clusterName": "test"}, "ingress": map[string]any{"replicas": 2}}, nil
}
func (debugSource) ModuleConfig(string) (values.Values, error) {
	return values.Values{"replicas": 2}, nil
}

func (debugSource) RenderModule(context.Context, string) (*helm.Rendered, error) {
	return &helm.Rendered{
		Manifest: "# Source: ingress/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress\ndata:\n  replicas: \"2\"\n" +
			"---\n# Source: ingress/templates/new.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n",
		Hooks:    []string{"# Source: ingress/templates/hook.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: hook\n"},
		Checksum: "abc123",
	}, nil
}

// debugServer serves debugSource's debug API over HTTP, as the socket and
// --debug-http do.
func debugServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(server.New(server.DefaultOptions(), debugSource{}, slog.New(slog.DiscardHandler)).DebugHandler())
	t.Cleanup(ts.Close)
	return ts
}

// runDebug runs a debug command line and returns its output.
func runDebug(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "addon-operator", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newDebugCommands()...)
	root.AddCommand(newProfileCommand())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

func TestDebugCommandsGolden(t *testing.T) {
	t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", "")
	address := debugServer(t).URL
	tests := []struct {
		golden string
		args   []string
	}{
		{"queue-list.txt", []string{"queue", "list"}},
		{"queue-list.json", []string{"queue", "list", "-o", "json"}},
		{"queue-list.yaml", []string{"queue", "list", "-o", "yaml"}},
		{"module-list.txt", []string{"module", "list"}},
		{"module-list.json", []string{"module", "list", "-o", "json"}},
		{"module-list.yaml", []string{"module", "list", "-o", "yaml"}},
		{"module-values.txt", []string{"module", "values", "ingress"}},
		{"module-values.yaml", []string{"module", "values", "ingress", "-o", "yaml"}},
		{"module-config.json", []string{"module", "config", "ingress", "-o", "json"}},
		{"global-values.yaml", []string{"global", "values", "-o", "yaml"}},
		{"global-config.txt", []string{"global", "config"}},
		{"module-render.txt", []string{"module", "render", "ingress"}},
		{"module-render.yaml", []string{"module", "render", "ingress", "-o", "yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			got, err := runDebug(t, append(tt.args, "--address", address)...)
			if err != nil {
				t.Fatalf("%v: %v", tt.args, err)
			}
			checkDebugGolden(t, tt.golden, got)
		})
	}
}

func checkDebugGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "debug", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got), regenerate with -update:\n%s", golden, diff)
	}
}

// TestDebugOverSocket reaches the operator over a unix socket named by the
// flag and by the environment.
func TestDebugOverSocket(t *testing.T) {
	path := debugSocket(t)
	dir := filepath.Dir(path)
	for name, args := range map[string][]string{
		"flag": {"module", "list", "-o", "json", "--debug-socket", path},
		"env":  {"module", "list", "-o", "json"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", path)
			if name == "flag" {
				t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", filepath.Join(dir, "wrong"))
			}
			got, err := runDebug(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var ms []status.ModuleStatus
			if err := json.Unmarshal([]byte(got), &ms); err != nil {
				t.Fatalf("%v:\n%s", err, got)
			}
			if diff := cmp.Diff(debugSource{}.Modules(), ms); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDebugCommandErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "debug.socket")
	address := debugServer(t).URL
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"socket missing", []string{"queue", "list", "--debug-socket", missing},
			[]string{"operator not reachable at unix socket " + missing, "the operator may not be running"}},
		{"unknown module", []string{"module", "values", "nope", "--address", address}, []string{`no module "nope" (HTTP 404)`}},
		{"unknown module to render", []string{"module", "render", "nope", "--diff", "--address", address}, []string{`no module "nope" (HTTP 404)`}},
		{"bad output", []string{"module", "list", "-o", "xml", "--address", address}, []string{`--output "xml": want text, json, yaml, name or jsonpath=<expr>`}},
		{"bad address", []string{"module", "list", "--address", "ftp://host"}, []string{`address "ftp://host"`}},
		{"missing argument", []string{"module", "values"}, []string{"accepts 1 arg(s), received 0"}},
		{"diff without a cluster", []string{"module", "render", "ingress", "--diff", "--address", address, "-n", "ops"}, []string{"load kubeconfig", "no configuration has been provided"}},
		{"diff without the operator's namespace", []string{"module", "render", "ingress", "--diff", "--address", address}, []string{"the operator's namespace is unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, env := range []string{"KUBE_CONFIG", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "ADDON_OPERATOR_DEBUG_SOCKET", "ADDON_OPERATOR_NAMESPACE"} {
				t.Setenv(env, "")
			}
			t.Setenv("HOME", t.TempDir()) // no ~/.kube/config
			_, err := runDebug(t, tt.args...)
			if err == nil {
				t.Fatalf("%v succeeded", tt.args)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestModuleRenderDiff(t *testing.T) {
	kubeconfig := fakeAPIServer(t, map[string]string{
		"/api/v1/namespaces/ops/configmaps/ingress": `{"apiVersion":"v1","kind":"ConfigMap",
			"metadata":{"name":"ingress","namespace":"ops","uid":"1","resourceVersion":"7","labels":{"app.kubernetes.io/managed-by":"Helm"}},
			"data":{"replicas":"1"}}`,
		"/api/v1/namespaces/ops/configmaps/old": `{"apiVersion":"v1","kind":"ConfigMap",
			"metadata":{"name":"old","namespace":"ops","uid":"2"},"data":{"stale":"yes"}}`,
		// The release deployed ingress and old; the render drops old.
		"/api/v1/namespaces/ops/secrets": helmReleaseSecrets(t, "ingress", "ops",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n"),
	})
	address := debugServer(t).URL
	for _, format := range []string{"txt", "json"} {
		t.Run(format, func(t *testing.T) {
			args := []string{"module", "render", "ingress", "--diff", "--address", address, "--kubeconfig", kubeconfig, "-n", "ops"}
			if format == "json" {
				args = append(args, "-o", "json")
			}
			got, err := runDebug(t, args...)
			if exitCode(err) != 1 {
				t.Fatalf("exit code %d (%v), want 1: applying would change objects", exitCode(err), err)
			}
			checkDebugGolden(t, "module-render-diff."+format, got)
		})
	}
}

// fakeAPIServer answers discovery for core/v1 ConfigMaps and GETs of the
// objects given by path; it returns a kubeconfig for it.
func fakeAPIServer(t *testing.T, objects map[string]string) string {
	t.Helper()
	routes := map[string]string{
		"/api":    `{"kind":"APIVersions","versions":["v1"]}`,
		"/apis":   `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`,
		"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get"]}]}`,
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, ok := routes[r.URL.Path]
		if !ok {
			body, ok = objects[r.URL.Path]
		}
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			body = `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`
		}
		_, _ = fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
users: [{name: fake, user: {token: t}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`, ts.URL)
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// debugSocket serves the debug handler over a unix socket and returns its
// path.
func debugSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dbg") // short: socket paths are limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "debug.socket")
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(server.New(server.DefaultOptions(), debugSource{}, slog.New(slog.DiscardHandler)).DebugHandler())
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return path
}

func TestProfileCommand(t *testing.T) {
	path := debugSocket(t)
	t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", path)
	gzipped := func(b []byte) bool { return len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b }

	out, err := runDebug(t, "profile", "heap")
	if err != nil {
		t.Fatal(err)
	}
	if !gzipped([]byte(out)) {
		t.Errorf("profile heap wrote %d bytes that are not a gzipped profile", len(out))
	}

	file := filepath.Join(t.TempDir(), "goroutine.pb.gz")
	if out, err := runDebug(t, "profile", "goroutine", "--file", file); err != nil || out != "" {
		t.Fatalf("profile goroutine --file: %v, stdout %q", err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !gzipped(data) {
		t.Errorf("--file holds %d bytes that are not a gzipped profile", len(data))
	}

	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"no socket":        {[]string{"profile", "heap", "--debug-socket", filepath.Join(t.TempDir(), "none")}, "point --debug-socket"},
		"unknown profile":  {[]string{"profile", "nonsense"}, "profile nonsense"},
		"negative seconds": {[]string{"profile", "profile", "--seconds", "-1"}, "--seconds -1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runDebug(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// tokenAuth accepts one bearer token and lets it get everything.
type tokenAuth string

func (a tokenAuth) Authenticate(_ context.Context, token string) (server.User, bool, error) {
	return server.User{Name: "reader"}, token == string(a), nil
}

func (tokenAuth) Authorize(context.Context, server.User, string) (bool, string, error) {
	return true, "", nil
}

func TestDebugTokenFile(t *testing.T) {
	t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", "")
	opts := server.DefaultOptions()
	opts.DebugHTTP, opts.Auth = true, tokenAuth("s3cret")
	ts := httptest.NewServer(server.New(opts, debugSource{}, slog.New(slog.DiscardHandler)).Handler())
	t.Cleanup(ts.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    string // in the output
		wantErr string // in the error
	}{
		{name: "with the token", args: []string{"--token-file", tokenFile}, want: "ingress"},
		{name: "without a token", wantErr: "(HTTP 401)"},
		{name: "missing token file", args: []string{"--token-file", tokenFile + ".nope"}, wantErr: "--token-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runDebug(t, append([]string{"module", "list", "-o", "json", "--address", ts.URL}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(got, tt.want) {
				t.Errorf("output %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// helmReleaseSecrets is a SecretList holding one deployed revision of a
// Helm release, encoded as Helm's secrets driver stores it.
func helmReleaseSecrets(t *testing.T, name, namespace, manifest string) string {
	t.Helper()
	rel, err := json.Marshal(map[string]any{
		"name": name, "namespace": namespace, "version": 1, "manifest": manifest,
		"info": map[string]any{"status": "deployed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(rel); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	record := base64.StdEncoding.EncodeToString(gz.Bytes())
	list, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "SecretList", "items": []any{map[string]any{
			"metadata": map[string]any{"name": "sh.helm.release.v1." + name + ".v1", "namespace": namespace,
				"labels": map[string]any{"name": name, "owner": "helm", "status": "deployed", "version": "1"}},
			"type": "helm.sh/release.v1",
			"data": map[string]any{"release": base64.StdEncoding.EncodeToString([]byte(record))},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(list)
}

// conditionSource is debugSource with the ConfigMap rejected.
type conditionSource struct{ debugSource }

func (conditionSource) Conditions() []status.Condition {
	return []status.Condition{{Type: status.ConditionConfigMapInvalid, Message: "key \"web\": replicas must be of type integer; the last valid ConfigMap stays in force"}}
}

// TestListsWarnAboutConditions: module and queue listings say on stderr
// what /readyz names, so that a rejected ConfigMap does not read as
// "everything as configured".
func TestListsWarnAboutConditions(t *testing.T) {
	t.Setenv("ADDON_OPERATOR_DEBUG_SOCKET", "")
	ts := httptest.NewServer(server.New(server.DefaultOptions(), conditionSource{}, slog.New(slog.DiscardHandler)).DebugHandler())
	t.Cleanup(ts.Close)
	const want = "warning: ConfigMapInvalid: key \"web\": replicas must be of type integer; the last valid ConfigMap stays in force\n"
	for _, args := range [][]string{{"live", "module", "list"}, {"live", "queue", "list"}, {"module", "list"}} {
		stdout, stderr, code := runCLI(t, "", append(args, "--address", ts.URL)...)
		if code != 0 || stderr != want || !strings.Contains(stdout, "NAME") && !strings.Contains(stdout, "QUEUE") {
			t.Errorf("%v: exit %d, stderr %q (want %q), stdout:\n%s", args, code, stderr, want, stdout)
		}
	}
	_, stderr, _ := runCLI(t, "", "live", "module", "values", "ingress", "--address", ts.URL)
	if stderr != "" {
		t.Errorf("values printed warnings: %q", stderr)
	}
}
